"""ddp_rank.py: what every rank of bench/torch_ddp.py does whatever it trains on.

Its process group (Gloo on 127.0.0.1, one thread), the stop at --max-seconds (every rank
stops at the same step), one evaluation by rank 0 shared with the others (the ranks' models
are identical under DDP), the step's bytes as a ring all-reduce would send them, the output
files in the format `starling launch` writes them (a CSV cell, a summary number, an atomic
JSON file, the model's checksum), and the exit. bench/torch_ddp.py (images) and
bench/torch_ddp_text.py (text) hold the data, the model's loss and the loop.
"""
import hashlib
import json
import math
import os
import sys

SYSTEM = "torch-ddp"  # the system and mode the files name


def start_group(args, config, rank):
    """torch's threads as the config's node.threads (1 when 0) and the Gloo group of
    args.procs ranks; the thread count."""
    import torch
    import torch.distributed as dist
    from datetime import timedelta

    threads = config["node"]["threads"] or 1
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % args.port, rank=rank,
                            world_size=args.procs, timeout=timedelta(seconds=300))
    return threads


def wrap(model, procs):
    """The DDP wrapper that averages gradients in the backward; the model itself for one process.
    Boolean buffers (the GPT's causal mask) are left out of DDP's broadcast: Gloo cannot send
    bool, and they are constants, the same on every rank."""
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    if procs == 1:
        return model
    constants = [name for name, b in model.named_buffers() if b.dtype == torch.bool]
    DDP._set_params_and_buffers_to_ignore_for_model(model, constants)
    return DDP(model)


def out_of_time(args, seconds, steps):
    """True on every rank once any has run past --max-seconds (checked from the second step),
    so all stop at the same step."""
    import torch
    import torch.distributed as dist

    if args.max_seconds is None or steps == 0:
        return False
    flag = torch.tensor([1.0 if seconds >= args.max_seconds else 0.0])
    if args.procs > 1:
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return flag[0].item() > 0


def shared_by_rank0(rank, procs, evaluate, count):
    """Rank 0's `evaluate()` (a tuple of `count` floats), broadcast to every rank."""
    import torch
    import torch.distributed as dist

    result = torch.zeros(count, dtype=torch.float64)
    if rank == 0:
        result[:] = torch.tensor(evaluate(), dtype=torch.float64)
    if procs > 1:
        dist.broadcast(result, src=0)
    return tuple(v.item() for v in result)


def ring_bytes_per_step(params, procs):
    """COMPUTED, not measured (Gloo exposes no counters): what one rank sends (and receives)
    in a ring all-reduce of the fp32 gradients, 2 (N-1)/N * 4 bytes * parameters; 0 alone."""
    return 2 * (procs - 1) * 4 * params // procs if procs > 1 else 0


def finite(v):
    return v if v is not None and math.isfinite(v) else None


def fmt(v, spec):
    """A CSV cell: `spec` % v, empty for None or a non-finite number."""
    return "" if v is None or not math.isfinite(v) else spec % v


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def checksum(model):
    """SHA-1 of the parameters' bytes: equal on ranks that hold the same model."""
    digest = hashlib.sha1()
    for p in model.parameters():
        digest.update(p.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()


def finish(procs):
    """Waits for every rank to have written its files, then leaves."""
    import torch.distributed as dist

    if procs > 1:
        dist.barrier()
    # Not dist.destroy_process_group(): with gloo a rank can wait in it for ever once the
    # others have gone (seen here once in a few dozen runs, which hung an experiment). Every
    # output is written and closed: leave without tearing the group down.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
