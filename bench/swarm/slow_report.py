#!/usr/bin/env python3
"""Reads a slow-peers folder (bench/swarm/slow.sh): one folder per run (a1, b1, c1, a2, ...),
each with the peers' logs pK.log (K in start order; the last --slow-peers are the slow ones
in runs b and c) and their summaries. Prints one table row per run and, per round of runs,
the done-when's ratios; exits 1 when a run c misses a bound:
- idle: each fast peer's exchange_seconds (its time in the exchange: the round's transfer and
  the wait for the slowest peer) over its wall_seconds, both from its metrics CSV and counted
  from its first validation (after round 1: the start, where peers wait for each other to
  join, left out) to its last;
- time to target: from the job's round 0 (its first peer's) to the first validation of any
  peer at or below the target val_bpb (default: the worst final val_bpb of the round's runs,
  which every run reaches);
- final val_bpb: the mean of the peers' (a synchronous job's peers end on one model)."""
import argparse
import csv
import json
import os
import re
import statistics
import sys

from log_time import seconds

ROUND0 = re.compile(r"peers: state digest after round 0:")
EVAL = re.compile(r"info step (\d+) .*val_bpb ([0-9.]+)")
DONE = re.compile(r"info done: .*summary (\S+\.summary\.json)")
IDLE_BOUND, TIME_BOUND, BPB_BOUND = 0.10, 0.7, 0.02


def since(t, start):
    """Seconds from start to t, times of day within 12 h of each other (a run may cross midnight)."""
    return (t - start + 43200) % 86400 - 43200


def read_peer(path):
    """One peer's log and summary: its round-0 and done stamps, validations, summary."""
    peer = {"round0": None, "done": None, "evals": [], "summary": None}
    with open(path, errors="replace") as f:
        for line in f:
            t = seconds(line)
            if t is None:
                continue
            if ROUND0.search(line) and peer["round0"] is None:
                peer["round0"] = t
            elif m := EVAL.search(line):
                peer["evals"].append((t, int(m[1]), float(m[2])))
            elif m := DONE.search(line):
                peer["done"] = t
                with open(m[1]) as s:
                    peer["summary"] = json.load(s)
                with open(m[1].replace(".summary.json", ".metrics.csv")) as s:
                    peer["metrics"] = list(csv.DictReader(s))
    missing = [k for k in ("round0", "done", "summary") if peer[k] is None]
    if missing:
        raise ValueError(f"{path}: no {', '.join(missing)} in the log")
    return peer


def idle(peer):
    first, last = peer["metrics"][0], peer["metrics"][-1]
    delta = lambda key: float(last[key]) - float(first[key])
    return delta("exchange_seconds") / delta("wall_seconds") if len(peer["metrics"]) > 1 else float("nan")


def read_run(folder, peers, slow):
    run = {"peers": [read_peer(os.path.join(folder, f"p{k}.log")) for k in range(peers)]}
    run["slow"] = set(range(peers - slow, peers)) if os.path.basename(folder)[0] in "bc" else set()
    ps = run["peers"]
    run["start"] = min(p["round0"] for p in ps)
    run["wall"] = max(since(p["done"], run["start"]) for p in ps)
    fast = [k for k in range(peers) if k not in run["slow"]]
    run["fast_wall"] = max(since(ps[k]["done"], run["start"]) for k in fast)
    run["idle"] = {k: idle(p) for k, p in enumerate(ps)}
    run["bpb"] = [p["summary"]["val_bpb"] for p in ps]
    run["final"] = statistics.mean(run["bpb"])
    compute = [p["summary"]["compute_seconds"] for p in ps]
    run["compute_ratio"] = (statistics.mean(compute[k] for k in run["slow"]) / statistics.mean(compute[k] for k in fast)
                            if run["slow"] else None)
    run["fast"] = fast
    return run


def time_to(run, target):
    # The log's val_bpb has 4 decimals: the target is compared at that precision.
    hits = [since(t, run["start"]) for p in run["peers"] for t, _, bpb in p["evals"] if bpb <= round(target, 4)]
    return min(hits) if hits else None


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else (fmt + "–" + fmt).format(lo, hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--peers", type=int, default=8)
    ap.add_argument("--slow-peers", type=int, default=2)
    ap.add_argument("--slowdown", default="4")
    ap.add_argument("--target", type=float, help="the target val_bpb (default: the round's worst final)")
    a = ap.parse_args()

    names = sorted((d for d in os.listdir(a.folder) if re.fullmatch(r"[abc]\d+", d)), key=lambda d: (int(d[1:]), d[0]))
    if not names:
        sys.exit(f"slow_report.py: no run folders (a1, b1, ...) in {a.folder}")
    try:
        runs = {n: read_run(os.path.join(a.folder, n), a.peers, a.slow_peers) for n in names}
    except (OSError, ValueError, KeyError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1

    what = {"a": "uncapped, strict", "b": f"{a.slow_peers} at slowdown {a.slowdown}, wait",
            "c": f"{a.slow_peers} at slowdown {a.slowdown}, defer"}
    print(f"{a.peers} peers on {os.cpu_count()} cores; idle = exchange_seconds / wall_seconds from the first validation to the last")
    print("| run | peers | wall (s) | fast peers' wall (s) | fast peers idle | slow peers idle | slow/fast compute | "
          "final val_bpb | target | time to target (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    status = 0
    for r in sorted({n[1:] for n in names}, key=int):
        row = {k: runs.get(k + r) for k in "abc"}
        finals = [run["final"] for run in row.values() if run]
        target = a.target if a.target else (max(finals) if finals else None)
        for k, run in row.items():
            if not run:
                continue
            run["ttt"] = time_to(run, target) if target else None
            slow_idle = span([100 * run["idle"][i] for i in run["slow"]], "{:.1f} %") if run["slow"] else "–"
            ratio = f"{run['compute_ratio']:.2f}" if run["compute_ratio"] else "–"
            ttt = "–" if target is None else ("not reached" if run["ttt"] is None else f"{run['ttt']:.1f}")
            print(f"| {k}{r} | {what[k]} | {run['wall']:.1f} | {run['fast_wall']:.1f} | "
                  f"{span([100 * run['idle'][i] for i in run['fast']], '{:.1f} %')} | {slow_idle} | {ratio} | "
                  f"{span(run['bpb'], '{:.4f}')} | {'–' if target is None else f'{target:.4f}'} | {ttt} |")
        if row["b"] and row["a"]:
            print(f"round {r}: b's wall / a's: {row['b']['wall'] / row['a']['wall']:.2f}; "
                  f"b's final val_bpb vs a's: {100 * (row['b']['final'] / row['a']['final'] - 1):+.2f} %")
        if not row["c"]:
            continue
        misses = []
        idle = max(row["c"]["idle"][i] for i in row["c"]["fast"])
        if idle > IDLE_BOUND:
            misses.append(f"a fast peer of c{r} is idle {100 * idle:.1f} % of its wall time (bound {100 * IDLE_BOUND:.0f} %)")
        if row["b"]:
            tc, tb = row["c"]["ttt"], row["b"]["ttt"]
            if tc is None or tb is None:
                misses.append(f"round {r}: {'c' if tc is None else 'b'} never reached the target {target:.4f}")
            else:
                print(f"round {r}: time to target c/b = {tc:.1f} / {tb:.1f} s = {tc / tb:.2f} (bound {TIME_BOUND})")
                if tc > TIME_BOUND * tb:
                    misses.append(f"round {r}: c took {tc / tb:.2f} × b's time to the target (bound {TIME_BOUND})")
        if row["a"]:
            rel = row["c"]["final"] / row["a"]["final"] - 1
            print(f"round {r}: final val_bpb c vs a = {100 * rel:+.2f} % (bound ±{100 * BPB_BOUND:.0f} %)")
            if abs(rel) > BPB_BOUND:
                misses.append(f"round {r}: c's final val_bpb is {100 * rel:+.2f} % from a's (bound ±{100 * BPB_BOUND:.0f} %)")
        for m in misses:
            print(f"MISSED: {m}")
        status = status or (1 if misses else 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
