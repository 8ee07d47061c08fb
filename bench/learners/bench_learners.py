#!/usr/bin/python3
"""Crossbow on this machine: samples/s and time to a target accuracy for k learners per node.

Two parts, both driving the real `starling train`:
  throughput  1 vs 2 (or more, or "auto") learners at each batch, interleaved repetitions,
              median samples/s (tuning trials included) and the ratio to the first count;
              with auto, the configurations the tuner settled on;
  convergence every (learners, batch, intra_sync) combination trained to the target;
              prints samples/s, time to target and final accuracy.
--scale-lr scales the config's learning rate with the batch (lr x batch / the config's batch).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib


def run(starling, config, overrides, workdir):
    summary = os.path.join(workdir, "summary.json")
    cmd = [starling, "train", "--config", config, "--summary", summary,
           "--set", f"run.out_dir={workdir}"]
    for key, value in overrides.items():
        cmd += ["--set", f"{key}={value}"]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"starling failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    with open(summary) as f:
        return json.load(f)


def batch_settings(args, batch):
    settings = {"optimizer.batch": batch}
    if args.scale_lr:
        with open(args.config, "rb") as f:
            optimizer = tomllib.load(f)["optimizer"]
        settings["optimizer.lr"] = optimizer["lr"] * batch / optimizer["batch"]
    return settings


def settled_on(summary):
    k = summary["learners_per_peer"]
    if k == 1:
        return "1"
    return f"{k} {summary['intra_sync']}" + (f"/{summary['sync_every']}" if summary["intra_sync"] == "sma" else "")


def throughput(args, workdir):
    counts = args.learners.split(",")
    batches = [int(b) for b in args.batches.split(",")]
    rates = {(b, k): [] for b in batches for k in counts}
    chosen = {(b, k): [] for b in batches for k in counts}
    for rep in range(args.repeats):
        for b in batches:
            for k in counts:
                s = run(args.starling, args.config, {
                    "node.learners": k, "run.epochs": args.epochs, "run.eval_every": 1000,
                    "node.intra_sync": args.intra_sync, **batch_settings(args, b)}, workdir)
                rates[(b, k)].append(s["samples_per_second"])
                chosen[(b, k)].append(settled_on(s))
                print(f"  rep {rep + 1}/{args.repeats}  batch {b}  learners {k}: "
                      f"{s['samples_per_second']:.0f} samples/s ({settled_on(s)})", file=sys.stderr)
    print(f"\nthroughput, intra_sync {args.intra_sync}, {args.epochs} epochs a run, "
          f"median of {args.repeats} interleaved runs")
    print(f"{'batch':>5} {'learners':>8} {'samples/s':>10} {'vs ' + counts[0]:>8}  trained with")
    for b in batches:
        base = statistics.median(rates[(b, counts[0])])
        for k in counts:
            m = statistics.median(rates[(b, k)])
            print(f"{b:>5} {k:>8} {m:>10.0f} {m / base:>7.2f}x  {', '.join(chosen[(b, k)])}")


def convergence(args, workdir):
    print(f"\nconvergence to {args.target}: {args.config}")
    print(f"{'sync':>8} {'learners':>8} {'batch':>6} {'samples/s':>10} {'to target s':>12} {'accuracy':>9} {'epochs':>7}")
    for mode in args.modes.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            for k in args.learners.split(","):
                s = run(args.starling, args.config, {
                    "node.learners": k, "node.intra_sync": mode, **batch_settings(args, batch),
                    "run.target_accuracy": args.target, "run.epochs": args.max_epochs}, workdir)
                ttt = s["time_to_target_seconds"]
                print(f"{mode:>8} {k:>8} {batch:>6} {s['samples_per_second']:>10.0f} "
                      f"{(f'{ttt:.1f}' if ttt is not None else 'not reached'):>12} "
                      f"{s['test_accuracy']:>9.4f} {s['epochs']:>7.2f}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("part", choices=["throughput", "convergence"])
    p.add_argument("--starling", default="build/cli/starling")
    p.add_argument("--config", default="configs/fmnist-mlp.toml")
    p.add_argument("--learners", default="1,2", help="learner counts, or auto, comma-separated")
    p.add_argument("--batches", default="8,16,32", help="per-learner batches, comma-separated")
    p.add_argument("--scale-lr", action="store_true", help="scale the config's lr with the batch")
    p.add_argument("--modes", default="sma,average", help="convergence: intra_sync modes")
    p.add_argument("--intra-sync", default="sma", help="throughput: intra_sync mode")
    p.add_argument("--epochs", type=float, default=0.5, help="throughput: epochs per run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--target", type=float, default=0.88)
    p.add_argument("--max-epochs", type=float, default=10)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        (throughput if args.part == "throughput" else convergence)(args, workdir)


if __name__ == "__main__":
    main()
