#!/usr/bin/python3
"""Calibration of `starling simulate` against real runs on this machine.

For every exchange mode of the shipped 4-peer MLP configs and every peer count (2, 4, 8 by
default) it writes a config with that many [[peer]] entries, asks `starling simulate` for
its prediction, runs `starling launch` for a short while (a few hundred iterations), and
prints predicted against measured samples/s with the error. Loopback first (every peer on
this host, as the simulator's `--network loopback` assumes); then, when root, the same in
network namespaces with a rate limit (`scripts/netns.sh up N RATE` + `starling launch
--netns`), simulated as `--network RATE:50us:BURST --hosts 1`: a token-bucket link with
netns.sh's bucket, and the peers still share this host's cores.

  bench/validate_simulator.py [--starling build/cli/starling] [--peers 2,4,8]
      [--modes allreduce,local-sgd,...] [--iterations 300] [--repeats 3]
      [--netns 100mbit|none] [--netns-modes allreduce,choco-topk] [--json FILE]

Exit 0 when every point is within --tolerance (25 %), 1 otherwise, 2 on bad arguments.
"""
import argparse
import csv
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ["allreduce", "local-sgd", "gossip", "exponential", "choco-topk", "async-gossip"]
COMPRESSED = {"choco-topk"}
TRAIN_SAMPLES = 60000
BASE_PORT = 6400  # away from the tests' 5600s


def peers_config(mode, peers, folder):
    """The shipped 4-peer config of `mode` with `peers` [[peer]] entries on this host."""
    text = open(os.path.join(ROOT, "configs", f"fmnist-mlp-4peers-{mode}.toml")).read()
    head = re.split(r"^\[\[peer\]\]", text, flags=re.M)[0]
    tail = text[text.index("[compression]"):] if "[compression]" in text else ""
    entries = "".join(f'[[peer]]\nid = {i}\nendpoint = "tcp://127.0.0.1:{BASE_PORT + i}"\n\n' for i in range(peers))
    path = os.path.join(folder, f"{mode}-{peers}.toml")
    with open(path, "w") as f:
        f.write(head + entries + tail)
    return path


def run(cmd, timeout):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exited {done.returncode}")
    return done


DEFAULT_LATENCY = "50us"  # the simulator's default one-way latency, spelled out before the burst


def netns_burst(rate):
    """Bytes of the token bucket `scripts/netns.sh up N RATE` gives each namespace's link."""
    done = subprocess.run([os.path.join(ROOT, "scripts", "netns.sh"), "burst", rate], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip())
    return int(done.stdout)


def predict(args, config, peers, network, folder):
    out = os.path.join(folder, "prediction.json")
    cmd = [args.starling, "simulate", "--config", config, "--peers", str(peers), "--json", out, "--network", network]
    if network != "loopback":
        cmd[-1] = f"{network}:{DEFAULT_LATENCY}:{netns_burst(network)}b"
        cmd += ["--hosts", "1", "--cores-per-host", str(os.cpu_count())]
    run(cmd, 120)
    row = json.load(open(out))["predictions"][0]
    return row["samples_per_second"], row["bound"]


def window_rate(folder):
    """Samples/s of the run's middle, summed over the peers: each peer's metrics CSV has a
    row at every evaluation, and each row's samples over its samples/s is the training time
    so far (evaluations excluded); the window runs from the first evaluation to the one
    before the last. What comes before it (processes starting one after another, the first
    rounds' page faults and connections) and the last stretch (the last exchange; gossip's closing all-reduce, when it had one,
    75 ms at 100 Mbit/s: as much as 20 CHOCO rounds) belong to a short run, not to the
    steady state the simulator predicts."""
    total = 0.0
    files = glob.glob(os.path.join(folder, "*.metrics.csv"))
    if not files:
        raise RuntimeError(f"no metrics CSV in {folder}")
    for path in files:
        rows = list(csv.DictReader(open(path)))
        if len(rows) < 3:
            raise RuntimeError(f"{path}: {len(rows)} evaluation rows, the window needs 3")
        (a, b) = (rows[0], rows[-2])
        sa, sb = float(a["samples"]), float(b["samples"])
        ta, tb = sa / float(a["samples_per_second"]), sb / float(b["samples_per_second"])
        total += (sb - sa) / max(tb - ta, 1e-9)
    return total


def measure(args, config, peers, iterations, netns, network, folder):
    """--repeats times, interleaved: a prediction (the simulator's probes measure this shared
    machine as it is at that moment) and a launch's steady-state samples/s (window_rate),
    with the whole run's (the launch summary: start-up included) for reference. Medians of
    each: the machine's load moves probes and runs alike, by 20-40 %."""
    epochs = iterations * 32 * peers / TRAIN_SAMPLES
    # Evaluations every 2/5 of the run (after an exchange of local SGD's period 8) and at its end.
    every = max(8, iterations * 2 // 5 // 8 * 8) * 32 * peers / TRAIN_SAMPLES
    predicted, bounds, rates, whole = [], [], [], []
    for r in range(args.repeats):
        rate, bound = predict(args, config, peers, network, folder)
        predicted.append(rate), bounds.append(bound)
        out = os.path.join(folder, f"run{r}")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        summary = os.path.join(out, "summary.json")
        cmd = [args.starling, "launch", "--config", config, "--summary", summary, "--set", f"run.epochs={epochs:.6f}",
               "--set", f"run.eval_every={every:.6f}", "--set", f'run.out_dir="{out}"', "--set", "run.target_accuracy=0.0"]
        if netns:
            cmd.append("--netns")
        run(cmd, 600)
        whole.append(json.load(open(summary))["samples_per_second"])
        rates.append(window_rate(out))
    return {"predicted": statistics.median(predicted), "predictions": predicted, "bound": statistics.mode(bounds),
            "measured": statistics.median(rates), "runs": rates, "whole_run": statistics.median(whole)}


def point(args, mode, peers, network, folder, rows):
    config = peers_config(mode, peers, folder)
    netns = network != "loopback"
    # Dense exchanges at the namespaces' rate take tens of ms a round: few iterations do. CHOCO's
    # rounds take 2 ms there, and a window of a few dozen is one TCP hiccup away from noise.
    iterations = args.netns_iterations if netns and mode not in COMPRESSED else args.iterations
    row = {"mode": mode, "network": "netns:" + network if netns else network, "peers": peers}
    row.update(measure(args, config, peers, iterations, netns, network, folder))
    row["error"] = error = (row["predicted"] - row["measured"]) / row["measured"]
    rows.append(row)
    flag = "" if abs(error) <= args.tolerance else "  MISS"
    print(f"{mode:>13} {row['network']:>15} {peers:>5} {row['predicted']:>11.0f} {row['measured']:>11.0f} {error * 100:>+7.1f}%"
          f"  {row['bound']:<10} {row['whole_run']:>9.0f}{flag}", flush=True)


def netns_ready(rate, peers):
    if rate == "none":
        return False, "--netns none"
    if os.geteuid() != 0:
        return False, "not root"
    done = subprocess.run([os.path.join(ROOT, "scripts", "netns.sh"), "up", str(peers), rate],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return done.returncode == 0, done.stderr.strip()


def netns_down(peers):
    subprocess.run([os.path.join(ROOT, "scripts", "netns.sh"), "down", str(peers)], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starling", default=os.path.join(ROOT, "build", "cli", "starling"))
    parser.add_argument("--peers", default="2,4,8")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--iterations", type=int, default=300, help="iterations per peer of a loopback run")
    parser.add_argument("--repeats", type=int, default=3, help="predictions and launches per point, interleaved (the medians count)")
    parser.add_argument("--netns", default="100mbit", help="rate of the namespaced runs, or none")
    parser.add_argument("--netns-modes", default="allreduce,choco-topk")
    parser.add_argument("--netns-iterations", type=int, default=48, help="of a namespaced run, uncompressed modes")
    parser.add_argument("--no-loopback", action="store_true", help="only the namespaced runs")
    parser.add_argument("--tolerance", type=float, default=0.25)
    parser.add_argument("--json", help="write every point here")
    args = parser.parse_args()
    peers = [int(p) for p in args.peers.split(",")]
    modes = args.modes.split(",")
    if any(m not in MODES for m in modes) or any(p < 2 for p in peers) or not os.access(args.starling, os.X_OK):
        parser.error(f"modes are {MODES}, peers at least 2, and {args.starling} must exist (build first)")
    rows = []
    print(f"{'mode':>13} {'network':>15} {'peers':>5} {'predicted':>11} {'measured':>11} {'error':>8}  {'bound':<10} {'whole run':>9}  (samples/s)")
    with tempfile.TemporaryDirectory(prefix="starling-validate-") as folder:
        for mode in [] if args.no_loopback else modes:
            for p in peers:
                point(args, mode, p, "loopback", folder, rows)
        for p in peers:
            ready, why = netns_ready(args.netns, p)
            if not ready:
                print(f"(namespaced runs skipped: {why})")
                break
            try:
                for mode in args.netns_modes.split(","):
                    point(args, mode, p, args.netns, folder, rows)
            finally:
                netns_down(p)
    misses = [r for r in rows if abs(r["error"]) > args.tolerance]
    worst = max(abs(r["error"]) for r in rows) if rows else 0
    print(f"{len(rows) - len(misses)} of {len(rows)} points within {args.tolerance:.0%} (worst {worst:.0%})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tolerance": args.tolerance, "points": rows}, f, indent=2)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
