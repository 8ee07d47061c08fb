#!/usr/bin/python3
"""Gloo all-reduce among p processes on 127.0.0.1 (torch.distributed, gloo backend), the
yardstick for bench_allreduce: same sizes, same repetition counts, median time on rank 0,
same columns (nccl-tests convention: busbw = algbw * 2(p-1)/p). Gloo computes the sum;
Starling the mean, one extra division per element that does not change the traffic.

    /usr/bin/python3 gloo_allreduce.py [--peers 2,4] [--min-bytes 1024]
                                       [--max-bytes 67108864] [--json FILE]
"""
import argparse
import json
import os
import random
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def repetitions(nbytes):
    return max(5, min(200, (256 << 20) // nbytes))


def sizes(args):
    out, b = [], args.min_bytes
    while b <= args.max_bytes:
        out.append(b)
        b *= 4
    return out


def worker(rank, p, port, byte_sizes, queue):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=p)
    for nbytes in byte_sizes:
        x = torch.full((max(1, nbytes // 4),), float(rank + 1), dtype=torch.float32)
        for _ in range(3):
            dist.all_reduce(x)
        times = []
        for _ in range(repetitions(nbytes)):
            start = time.perf_counter()
            dist.all_reduce(x)
            times.append(time.perf_counter() - start)
        if rank == 0:
            queue.put((nbytes, statistics.median(times)))
    dist.destroy_process_group()


def run_peers(p, byte_sizes):
    port = random.randint(20000, 50000)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, p, port, byte_sizes, queue)) for r in range(p)]
    for proc in procs:
        proc.start()
    rows = []
    for _ in byte_sizes:
        nbytes, seconds = queue.get(timeout=600)
        algbw = nbytes / seconds / 1e9
        rows.append({"peers": p, "bytes": nbytes, "seconds": seconds,
                     "algbw_gbps": algbw, "busbw_gbps": algbw * 2 * (p - 1) / p})
    for proc in procs:
        proc.join()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", default="2,4")
    parser.add_argument("--min-bytes", type=int, default=1024)
    parser.add_argument("--max-bytes", type=int, default=64 << 20)
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    print(f"{'peers':>5} {'bytes':>12} {'seconds':>12} {'algbw_gbps':>11} {'busbw_gbps':>11}")
    for p in (int(v) for v in args.peers.split(",")):
        for row in run_peers(p, sizes(args)):
            print(f"{row['peers']:5d} {row['bytes']:12d} {row['seconds']:12.6f} "
                  f"{row['algbw_gbps']:11.3f} {row['busbw_gbps']:11.3f}", flush=True)
            rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
