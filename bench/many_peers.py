#!/usr/bin/env python3
"""many_peers.py: what one peer costs as the job grows, measured on this host.

For each peer count N, writes a config of N peers on 127.0.0.1 (the base config's [[peer]]
list replaced), runs `starling launch` with a small model for a short job, and reports per
peer: control messages per second (hello, heartbeat, leave and view messages: the summary's
control_messages_sent over its wall_seconds), open file descriptors (ZeroMQ sockets and
their pipes, sampled from /proc while the job trains; the median over peers of each peer's
largest sample) and resident memory (VmRSS, sampled alike), plus the job's wall time and
whether every peer ended in the view of all N.

With --in-process the N peers are threads of the launcher (`launch --in-process`), and what is
sampled is that one process: its open descriptors, threads and resident memory at their
largest, divided by N for the per-peer figures.

Usage:
  /usr/bin/python3 bench/many_peers.py [--starling build/cli/starling] [--peers 8,32,128]
      [--config configs/fmnist-mlp-4peers-gossip.toml] [--set KEY=VALUE]... [--port 7000]
      [--in-process]
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def write_config(base, peers, port, path):
    text = open(base).read()
    head = text[:text.index("[[peer]]")]
    body = "".join('[[peer]]\nid = %d\nendpoint = "tcp://127.0.0.1:%d"\n' % (i, port + i) for i in range(peers))
    with open(path, "w") as f:
        f.write(head + body)


def peer_pids(launcher):
    """The `starling peer` processes under the launcher (its children)."""
    try:
        with open("/proc/%d/task/%d/children" % (launcher, launcher)) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def sample(pid):
    """(open file descriptors, resident KiB, threads) of a process, or None once it is gone."""
    try:
        fds = len(os.listdir("/proc/%d/fd" % pid))
        with open("/proc/%d/status" % pid) as f:
            status = f.read()
        rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
        threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
        return fds, rss, threads
    except (OSError, AttributeError):
        return None


def run(args, peers, workdir):
    config = os.path.join(workdir, "peers%d.toml" % peers)
    out = os.path.join(workdir, "out%d" % peers)
    write_config(args.config, peers, args.port, config)
    cmd = [args.starling, "launch", "--config", config, "--set", 'run.out_dir="%s"' % out]
    if args.in_process:
        cmd.append("--in-process")
    for kv in args.set:
        cmd += ["--set", kv]
    start = time.monotonic()
    launcher = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    most = {}
    while launcher.poll() is None:
        for pid in [launcher.pid] if args.in_process else peer_pids(launcher.pid):
            s = sample(pid)
            if s:
                most[pid] = tuple(max(a, b) for a, b in zip(most.get(pid, (0, 0, 0)), s))
        time.sleep(0.2)
    wall = time.monotonic() - start
    summaries = [json.load(open(f)) for f in glob.glob(os.path.join(out, "*-peer*.summary.json"))]
    rates = [s["control_messages_sent"] / s["wall_seconds"] for s in summaries if s.get("wall_seconds")]
    # Per peer: each process's own largest sample, or the one process's shared among its peers.
    share = peers if args.in_process else 1
    return {
        "peers": peers, "exit": launcher.returncode, "wall_seconds": wall, "summaries": len(summaries),
        "all_in_last_view": all(len(s.get("members_at_end") or []) == peers for s in summaries),
        "control_per_second": statistics.median(rates) if rates else None,
        "fds": statistics.median(v[0] for v in most.values()) / share if most else None,
        "rss_mib": statistics.median(v[1] for v in most.values()) / 1024 / share if most else None,
        "threads": statistics.median(v[2] for v in most.values()) / share if most else None,
        "test_accuracy": statistics.mean(s["test_accuracy"] for s in summaries) if summaries else None,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--starling", default="build/cli/starling")
    p.add_argument("--peers", default="8,32,128")
    p.add_argument("--config", default="configs/fmnist-mlp-4peers-gossip.toml")
    p.add_argument("--set", action="append", default=[], help="KEY=VALUE for every peer (repeatable)")
    p.add_argument("--port", type=int, default=7000, help="peer i listens on port + i")
    p.add_argument("--in-process", action="store_true", help="the peers as threads of one process")
    args = p.parse_args()
    if not args.set:
        args.set = ["model.hidden=[64]", "run.epochs=2"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="many_peers_") as workdir:
        for n in [int(x) for x in args.peers.split(",")]:
            rows.append(run(args, n, workdir))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print("%6s %5s %8s %9s %14s %8s %8s %8s %9s" % ("peers", "exit", "wall s", "summaries", "control msg/s",
                                                     "fds", "threads", "RSS MiB", "accuracy"))
    for r in rows:
        print("%6d %5d %8.1f %9d %14.1f %8.1f %8.2f %8.2f %9.4f" % (
            r["peers"], r["exit"], r["wall_seconds"], r["summaries"], r["control_per_second"] or 0, r["fds"] or 0,
            r["threads"] or 0, r["rss_mib"] or 0, r["test_accuracy"] or 0))


if __name__ == "__main__":
    main()
