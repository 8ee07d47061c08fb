#!/usr/bin/python3
"""Gloo all-reduce among p processes on 127.0.0.1 (torch.distributed, gloo backend), the
yardstick for bench_allreduce: same sizes, same repetition counts, median time on rank 0,
same columns (nccl-tests convention: busbw = algbw * 2(p-1)/p). Gloo computes the sum;
Starling the mean, one extra division per element that does not change the traffic.

The rendezvous port is one the OS hands out as free (bound to port 0), and a run whose
ranks die before finishing (the port taken in between, errno 98) is retried on a fresh
one rather than waited on. --isa caps ATen's kernels (ATEN_CPU_CAPABILITY); Gloo's own
sum is compiled in, so the ISA printed is ATen's.

    /usr/bin/python3 gloo_allreduce.py [--peers 2,4] [--min-bytes 1024]
                                       [--max-bytes 67108864] [--isa avx2] [--json FILE]
"""
import argparse
import json
import os
import queue as queues
import socket
import statistics
import sys
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


def free_port():
    """A port the OS reports free now (it could be taken before rank 0 binds it: retried)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_capability():
    """ATen's kernel ISA, as torch reports it ("AVX2", "AVX512", "NO AVX")."""
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def attempt(p, byte_sizes, deadline_s):
    """(nbytes, seconds) per size, or None when a rank died first; the ranks are ended."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, p, port, byte_sizes, queue)) for r in range(p)]
    for proc in procs:
        proc.start()
    results, deadline = [], time.monotonic() + deadline_s
    try:
        while len(results) < len(byte_sizes):
            try:
                results.append(queue.get(timeout=1))
            except queues.Empty:
                if any(proc.exitcode not in (None, 0) for proc in procs):
                    return None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"gloo all-reduce among {p} ranks made no result in {deadline_s} s")
        return results
    finally:
        done = len(results) == len(byte_sizes)  # else the other ranks may wait forever
        for proc in procs:
            proc.join(timeout=30 if done else 0)
            if proc.is_alive():
                proc.kill()
                proc.join()


def run_peers(p, byte_sizes, tries=5):
    for _ in range(tries):
        results = attempt(p, byte_sizes, deadline_s=600)
        if results is not None:
            break
        print(f"gloo: a rank failed among {p} (port taken?), retrying on a fresh port", flush=True)
    else:
        raise RuntimeError(f"gloo all-reduce among {p} ranks failed {tries} times")
    rows = []
    for nbytes, seconds in results:
        algbw = nbytes / seconds / 1e9
        rows.append({"peers": p, "bytes": nbytes, "seconds": seconds, "algbw_gbps": algbw,
                     "busbw_gbps": algbw * 2 * (p - 1) / p, "isa": f"aten {cpu_capability()}"})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", default="2,4")
    parser.add_argument("--min-bytes", type=int, default=1024)
    parser.add_argument("--max-bytes", type=int, default=64 << 20)
    parser.add_argument("--isa", choices=["scalar", "avx2", "avx512"],
                        help="cap ATen's kernels (ATEN_CPU_CAPABILITY) at this ISA")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.isa:  # read by every rank at import, and by this process's report below
        os.environ["ATEN_CPU_CAPABILITY"] = {"scalar": "default"}.get(args.isa, args.isa)
    print(f"gloo isa: aten {cpu_capability()}", file=sys.stderr)
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
