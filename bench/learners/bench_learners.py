#!/usr/bin/python3
"""Crossbow on this machine: samples/s and time to a target accuracy for k learners per node.

Two parts, both driving the real `starling train`:
  throughput  1 vs 2 (or more) learners at one batch, interleaved repetitions, median
              samples/s and the ratio to 1 learner (the issue's 2-learner target: >= 1.7x);
  convergence every (learners, batch, intra_sync) combination trained to the target;
              prints samples/s, time to target and final accuracy.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


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


def throughput(args, workdir):
    counts = [int(x) for x in args.learners.split(",")]
    rates = {k: [] for k in counts}
    for rep in range(args.repeats):
        for k in counts:
            s = run(args.starling, args.config, {
                "node.learners": k, "optimizer.batch": args.batch, "run.epochs": args.epochs,
                "run.eval_every": 1000, "node.intra_sync": args.intra_sync}, workdir)
            rates[k].append(s["samples_per_second"])
            print(f"  rep {rep + 1}/{args.repeats}  learners {k}: {s['samples_per_second']:.0f} samples/s",
                  file=sys.stderr)
    base = statistics.median(rates[counts[0]])
    print(f"\nthroughput, batch {args.batch}, intra_sync {args.intra_sync}, median of {args.repeats} interleaved runs")
    print(f"{'learners':>8} {'samples/s':>10} {'vs ' + str(counts[0]):>8}")
    for k in counts:
        m = statistics.median(rates[k])
        print(f"{k:>8} {m:>10.0f} {m / base:>7.2f}x")


def convergence(args, workdir):
    print(f"\nconvergence to {args.target}: {args.config}")
    print(f"{'sync':>8} {'learners':>8} {'batch':>6} {'samples/s':>10} {'to target s':>12} {'accuracy':>9} {'epochs':>7}")
    for mode in args.modes.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            for k in [int(x) for x in args.learners.split(",")]:
                s = run(args.starling, args.config, {
                    "node.learners": k, "optimizer.batch": batch, "node.intra_sync": mode,
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
    p.add_argument("--learners", default="1,2")
    p.add_argument("--batch", type=int, default=16, help="throughput: per-learner batch")
    p.add_argument("--batches", default="8,16,32", help="convergence: per-learner batches")
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
