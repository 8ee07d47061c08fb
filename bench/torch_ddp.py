#!/usr/bin/python3
"""torch_ddp.py: the PyTorch reference for a Starling config, DistributedDataParallel on CPU.

Reads a Starling config as `starling config --json` resolves it (every key, its default
filled in, the same --set overrides and checks as `starling`; bench/starling_config.py) and
trains the same model on the same data with the same per-process batch, optimizer, learning-rate
schedule, epochs, evaluation cadence, seed and target accuracy as N processes of PyTorch
DistributedDataParallel over Gloo, one process per Starling peer. It writes the files
`starling launch` writes, so `starling experiment` can put it next to Starling's variants.

A text config (data.dataset = "text", the GPT preset) is trained by bench/torch_ddp_text.py,
whose docstring says what it mirrors: the launcher has `starling partition` export the files
and every peer's ranges to DIR/NAME.partition.json, and each rank writes a text peer's
metrics CSV and summary; the aggregate then has val_loss, val_bpb (the mean over ranks),
val_bpb_max, tokens and target_bpb in place of test accuracy, as `starling launch`. What
follows describes images.

What is mirrored from Starling, and how:
  model      the config's, as `starling model --json` describes it (bench/starling_model.py;
             written to DIR/NAME.model.json for the ranks), so no architecture is copied here.
             PyTorch's default initialisation, torch.manual_seed(run.seed) (DDP broadcasts
             rank 0's parameters, so every rank starts from the same model).
  config     resolved once by the launcher and written to DIR/NAME.config.json for the ranks;
             a config `starling` refuses exits 2 here, with its error.
  data       Fashion-MNIST from the IDX .gz files in data.path (default Debian's
             /usr/share/datasets/fashion-mnist), x/255 normalised with each set's own mean and
             standard deviation, as Starling's packed datasets. data.dataset = "synthetic" is
             not supported here.
  sharding   an epoch is one pass over the whole training set across all ranks: every rank
             sees the same seeded permutation for an epoch and takes every N-th position from
             offset rank (Starling's sampler; the permutation itself comes from PyTorch's
             generator, so the order is not Starling's sample for sample). A rank's epoch has
             floor(shard / batch) steps, as a Starling learner's.
  partition  data.partition other than "iid" (dirichlet, shards, by-class): the launcher runs
             `starling partition` (--starling) once and writes DIR/NAME.partition.json; rank r
             trains on peer r's index list, shuffled each epoch by PyTorch's generator. The
             algorithm has one definition, Starling's; a config error there exits 2 here.
             The per-rank summary gets label_counts (rank r's samples per class; under iid,
             those of its first epoch's deal), as Starling's.
  optimizer  bench/starling_optimizer.py: SGD (momentum, nesterov, weight_decay as L2 in the
             gradient: the same update as Starling's), Adam (beta1, beta2, eps 1e-8) or AdamW
             (matrices decayed, clipping at clip_norm). DDP averages gradients after each
             step; Starling's all-reduce averages the models after each local step, which with
             a linear optimizer such as SGD with momentum is the same trajectory.
  schedule   learners/optimizers/schedule.cpp per step (bench/starling_optimizer.py): linear warm-up over
             warmup_steps, then constant, step (x gamma every step_epochs) or cosine to min_lr
             at the last step; steps per
             epoch = (60000 // N) // batch, total = ceil(epochs * (60000 // N)) // batch. At a
             drop of the step schedule the optimizer's state (momentum) is reset, as Starling's.
  evaluation after every eval_every epochs (60000 // N samples per rank per epoch) and after
             the last step, on the full 10k test set, by rank 0 (the ranks' models are
             identical under DDP), broadcast to every rank. Training throughput excludes
             evaluation time.
  clock      starts on every rank after data loading, process-group set-up and a barrier.
  threads    torch.set_num_threads([node] threads, or 1 when absent or 0); OMP and OpenBLAS
             threads are 1. [kernels], [exchange], [compression], [security] and the
             [[peer]] list are checked (by `starling config`) but do not apply (one DDP process per peer; with
             --procs 1 the model is plain PyTorch, no DDP wrapper).

Outputs (DIR = --out-dir, NAME = --name):
  DIR/NAME-peer<rank>.metrics.csv   one row per evaluation; header
      step,epoch,wall_seconds,samples,train_loss,test_accuracy,test_loss,samples_per_second,
      bytes_sent,bytes_received,compute_seconds,exchange_seconds,wait_seconds,staleness,
      consensus_distance
    (text: the columns of a Starling text peer, bench/torch_ddp_text.py)
    bytes_sent / bytes_received are COMPUTED, not measured (Gloo exposes no counters): what a
    ring all-reduce of the fp32 gradients sends and receives per rank and step,
    2 (N-1)/N * 4 bytes * parameters; 0 with N = 1 (bench/ddp_rank.py). compute_seconds is batch gather +
    forward + backward + optimizer step; under DDP the backward includes the gradient
    all-reduce, which cannot be separated, so exchange_seconds is left empty, as are
    wait_seconds, staleness and consensus_distance.
  DIR/NAME-peer<rank>.summary.json  that rank's summary
  DIR/NAME.summary.json             the aggregate, with the keys of `starling launch`'s
                                    (mode "torch-ddp", topology "ring") plus system and
                                    torch_version
  DIR/NAME.partition.json           `starling partition`'s export (non-iid images; text always)
Progress goes to stderr, one line per evaluation. Exit codes: 0 done, 1 failed while running
(missing data, a rank that died), 2 bad command line or configuration (a data set other than
Fashion-MNIST and text among them).

Usage:
  /usr/bin/python3 bench/torch_ddp.py --config configs/fmnist-mlp-4peers-allreduce.toml \
      [--set section.key=value]... [--procs N] [--out-dir DIR] [--name NAME] [--port P] \
      [--max-seconds S] [--starling PATH]
"""
import argparse
import gzip
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time

# One thread for every library PyTorch may call into; set before torch is imported (only the
# rank processes import it).
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

from ddp_rank import (SYSTEM, checksum, finish, finite, fmt, out_of_time, ring_bytes_per_step,  # noqa: E402
                      shared_by_rank0, start_group, wrap, write_json)
from starling_config import StarlingError, resolved_config, run_starling  # noqa: E402
from starling_model import describe, torch_model  # noqa: E402  (imports no torch)
from starling_optimizer import Schedule, clip, make_optimizer  # noqa: E402
from starling_sampling import mix_seed  # noqa: E402

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"
DATA_FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
              "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}
CSV_HEADER = ("step,epoch,wall_seconds,samples,train_loss,test_accuracy,test_loss,samples_per_second,"
              "bytes_sent,bytes_received,compute_seconds,exchange_seconds,wait_seconds,staleness,"
              "consensus_distance")
INT_MAX = 2 ** 63 - 1


def fail(message, code):
    print("torch_ddp.py: error: %s" % message, file=sys.stderr, flush=True)
    sys.exit(code)


# ---------------------------------------------------------------------------------------------
# Data and model (as bench/compare_torch.py).

def data_dir(config):
    return config["data"]["path"] or DEFAULT_DATA


def is_text(config):
    return config["data"]["dataset"] == "text"


def missing_data(config):
    """Why the config's data cannot be read here; None when it can (text: `starling
    partition` checks the path and reports it)."""
    if is_text(config):
        return None
    if config["data"]["dataset"] != "fashion-mnist":
        return 'data.dataset "%s" is not supported by torch_ddp.py (only "fashion-mnist" and "text")' % (
            config["data"]["dataset"])
    for name in DATA_FILES["train"] + DATA_FILES["test"]:
        path = os.path.join(data_dir(config), name)
        if not os.path.isfile(path):
            return "%s: no such file (install Debian's dataset-fashion-mnist or set data.path)" % path
    return None


def read_idx(path):
    """An IDX file (gzip) as a numpy array: magic gives the rank, then big-endian dims."""
    import numpy as np
    with gzip.open(path, "rb") as f:
        raw = f.read()
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load_set(config, which):
    """Images (n, 1, 28, 28) normalised with the set's own statistics, as Starling; labels int64."""
    import numpy as np
    import torch
    images, labels = (os.path.join(data_dir(config), name) for name in DATA_FILES[which])
    x = read_idx(images).astype(np.float64) / 255.0
    mean, std = x.mean(), max(x.std(), 1e-3)
    x = ((x - mean) / std).astype(np.float32)
    y = read_idx(labels).astype(np.int64)
    return torch.from_numpy(x).unsqueeze(1).contiguous(), torch.from_numpy(y)


def starling_binary(args):
    """--starling, else $STARLING, else `starling` on PATH, else build/cli/starling of this tree."""
    import shutil
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "cli", "starling")
    return args.starling or os.environ.get("STARLING") or shutil.which("starling") or os.path.normpath(here)


def partition_path(args):
    return "%s/%s.partition.json" % (args.out_dir, args.name)


def export_partition(args, config):
    """Has `starling partition` write every peer's index list, or for text the files and
    every peer's ranges (not re-implemented here, so the two cannot drift); nothing for iid
    images. Exits 2 on a config error it reports, 1 otherwise."""
    if config["data"]["partition"] == "iid" and not is_text(config):
        return
    try:
        run_starling(args.starling, ["partition", "--out", partition_path(args)], args.config, args.set)
    except StarlingError as e:
        fail(str(e), 2 if e.code == 2 else 1)
    with open(partition_path(args)) as f:
        peers = len(json.load(f)["peers"])
    if peers != args.procs:
        fail("--procs %d: the config's partition is over its %d peers" % (args.procs, peers), 2)


def load_part(args, config, rank, labels):
    """Rank's index list (a tensor) from the launcher's export; None for iid."""
    import torch
    if config["data"]["partition"] == "iid":
        return None
    with open(partition_path(args)) as f:
        exported = json.load(f)
    if exported["train_samples"] != labels.shape[0]:
        fail("%s: a partition of %d samples, but the training set has %d" % (
            partition_path(args), exported["train_samples"], labels.shape[0]), 1)
    return torch.tensor(exported["peers"][rank]["indices"], dtype=torch.int64)


# ---------------------------------------------------------------------------------------------
# One rank.

def run_rank(args, config, rank):
    """Rank `rank` on Fashion-MNIST; writes its CSV and summary, then leaves the process."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    nprocs = args.procs
    x_train, y_train = load_set(config, "train")
    x_test, y_test = load_set(config, "test")
    part = load_part(args, config, rank, y_train)
    threads = start_group(args, config, rank)

    run, o = config["run"], config["optimizer"]
    batch = o["batch"]
    torch.manual_seed(run["seed"])
    with open(args.model_json) as f:
        model = torch_model(json.load(f))
    params = sum(p.numel() for p in model.parameters())
    net = wrap(model, nprocs)
    opt = make_optimizer(o, model)

    # Starling's bookkeeping (actors/node_actor.cpp, learners/replicas/learner.cpp).
    train_size = x_train.shape[0]
    epoch_samples = max(1, train_size // nprocs)
    target_samples = max(1, math.ceil(run["epochs"] * epoch_samples))
    eval_interval = max(1, int(run["eval_every"] * epoch_samples))
    schedule = Schedule(o, epoch_samples // batch, target_samples // batch)
    shard_size = train_size // nprocs + (1 if rank < train_size % nprocs else 0) if part is None else part.shape[0]
    steps_per_shard_epoch = max(1, shard_size // batch)
    sampler_seed = mix_seed(run["seed"], 0x5a3d1e)

    def epoch_order(epoch):
        """This rank's samples for `epoch`, shuffled: its iid deal, or its part."""
        g = torch.Generator()
        g.manual_seed(mix_seed(sampler_seed, epoch) & INT_MAX)
        if part is None:
            return torch.randperm(train_size, generator=g)[rank::nprocs]
        return part[torch.randperm(part.shape[0], generator=g)]

    label_counts = torch.bincount(y_train[epoch_order(0)], minlength=10).tolist()
    step_bytes = ring_bytes_per_step(params, nprocs)

    prefix = "%s/%s-peer%d" % (args.out_dir, args.name, rank)
    csv = open(prefix + ".metrics.csv", "w")
    csv.write(CSV_HEADER + "\n")
    csv.flush()

    def test():
        """(accuracy, loss) on the full test set."""
        correct, loss_sum = 0, 0.0
        with torch.no_grad():
            for start in range(0, x_test.shape[0], 1000):
                logits = model(x_test[start:start + 1000])
                labels = y_test[start:start + 1000]
                loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
                correct += (logits.argmax(1) == labels).sum().item()
        return correct / x_test.shape[0], loss_sum / x_test.shape[0]

    dist.barrier()
    start = time.perf_counter()
    samples = steps = 0
    next_eval = eval_interval
    eval_seconds = compute_seconds = loss_sum = 0.0
    loss_count = 0
    cached_epoch, order = -1, None
    time_to_target, history = None, []
    stopped_early = False

    while samples < target_samples:
        stopped_early = out_of_time(args, time.perf_counter() - start, steps)
        if not stopped_early:
            lr = schedule.lr(steps)
            if schedule.is_drop(steps):  # Starling resets the optimizer's state where a step schedule drops
                opt.state.clear()
            for group in opt.param_groups:
                group["lr"] = lr
            t0 = time.perf_counter()
            epoch = steps // steps_per_shard_epoch
            if epoch != cached_epoch:
                order = epoch_order(epoch)
                cached_epoch = epoch
            first = (steps % steps_per_shard_epoch) * batch
            idx = order[first:first + min(batch, order.shape[0])]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(net(x_train[idx]), y_train[idx])
            loss.backward()
            clip(o, model)
            opt.step()
            compute_seconds += time.perf_counter() - t0
            loss_value = loss.item()
            if not math.isfinite(loss_value):
                print("[%s rank %d] error: the loss diverged (%r) at step %d" % (SYSTEM, rank, loss_value, steps),
                      file=sys.stderr, flush=True)
                sys.exit(1)
            loss_sum += loss_value
            loss_count += 1
            samples += batch
            steps += 1
        at_end = stopped_early or samples >= target_samples
        if samples >= next_eval or at_end:
            if not (stopped_early and history and history[-1]["step"] == steps):
                eval_start = time.perf_counter()
                accuracy, test_loss = shared_by_rank0(rank, nprocs, test, 2)
                now = time.perf_counter()
                eval_seconds += now - eval_start
                wall = now - start
                rate = samples / max(wall - eval_seconds, 1e-9)
                point = {"step": steps, "epoch": samples / epoch_samples, "wall_seconds": wall,
                         "samples": samples, "train_loss": loss_sum / max(1, loss_count),
                         "test_accuracy": accuracy, "test_loss": test_loss, "samples_per_second": rate,
                         "bytes": steps * step_bytes, "compute_seconds": compute_seconds}
                history.append(point)
                loss_sum, loss_count = 0.0, 0
                csv.write("%d,%s,%s,%d,%s,%s,%s,%s,%d,%d,%s,,,,\n" % (
                    steps, fmt(point["epoch"], "%.6f"), fmt(wall, "%.6f"), samples, fmt(point["train_loss"], "%.6f"),
                    fmt(accuracy, "%.6f"), fmt(test_loss, "%.6f"), fmt(rate, "%.1f"), point["bytes"], point["bytes"],
                    fmt(compute_seconds, "%.6f")))
                csv.flush()
                if time_to_target is None and run["target_accuracy"] > 0 and accuracy >= run["target_accuracy"]:
                    time_to_target = wall
                if rank == 0:
                    print("[%s rank %d] epoch %.2f  step %d  train_loss %.4f  test_accuracy %.4f  test_loss %.4f  "
                          "%.0f samples/s  %.1f s" % (SYSTEM, rank, point["epoch"], steps, point["train_loss"],
                                                      accuracy, test_loss, rate, wall), file=sys.stderr, flush=True)
            while next_eval <= samples:
                next_eval += eval_interval
        if stopped_early:
            break

    wall = time.perf_counter() - start
    train_seconds = max(wall - eval_seconds, 1e-9)
    csv.close()
    last = history[-1]
    summary = {
        "run": args.name, "mode": SYSTEM, "system": SYSTEM, "torch_version": torch.__version__,
        "peers": nprocs, "peer_id": rank, "learners_per_peer": 1, "model": config["model"]["kind"],
        "parameters": params, "batch": batch, "threads": threads, "epochs": last["epoch"], "steps": steps,
        "samples": samples, "wall_seconds": wall, "samples_per_second": samples / train_seconds,
        "train_loss": finite(last["train_loss"]), "test_accuracy": last["test_accuracy"],
        "test_loss": finite(last["test_loss"]), "target_accuracy": run["target_accuracy"],
        "time_to_target_seconds": time_to_target, "compute_seconds": compute_seconds,
        "exchange_seconds": None, "eval_seconds": eval_seconds, "stopped_by_max_seconds": stopped_early,
        "bytes_sent": steps * step_bytes, "bytes_received": steps * step_bytes,
        "bytes_computed_not_measured": True, "model_checksum": checksum(model),
        "partition": config["data"]["partition"], "label_counts": label_counts,
    }
    write_json(prefix + ".summary.json", summary)
    finish(nprocs)


# ---------------------------------------------------------------------------------------------
# The launcher: starts the ranks as processes of this script, then writes the aggregate.

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    """In a rank process before exec: SIGTERM when the launcher dies, even by SIGKILL (Linux)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def image_results(config, summaries):
    """Test accuracy over the ranks and the time to the target accuracy, as `starling launch`."""
    n, target = len(summaries), config["run"]["target_accuracy"]
    ttt = [s["time_to_target_seconds"] for s in summaries]
    return {
        "test_accuracy": sum(s["test_accuracy"] for s in summaries) / n,
        "test_accuracy_min": min(s["test_accuracy"] for s in summaries),
        "target_accuracy": target,
        "time_to_target_seconds": max(ttt) if target > 0 and all(t is not None for t in ttt) else None,
    }


def text_results(config, summaries):
    """Validation over the ranks (mean and worst bits per byte), tokens, and the time to the
    target bits per byte, as `starling launch` on text."""
    n, target = len(summaries), config["run"]["target_bpb"]
    ttt = [s["time_to_target_seconds"] for s in summaries]
    return {
        "val_loss": sum(s["val_loss"] for s in summaries) / n,
        "val_bpb": sum(s["val_bpb"] for s in summaries) / n,
        "val_bpb_max": max(s["val_bpb"] for s in summaries),
        "tokens": sum(s["tokens"] for s in summaries),
        "target_bpb": target,
        "time_to_target_seconds": max(ttt) if target > 0 and all(t is not None for t in ttt) else None,
    }


def aggregate(args, config, files):
    summaries = []
    for path in files:
        with open(path) as f:
            summaries.append(json.load(f))
    n = len(summaries)
    checksums = [s["model_checksum"] for s in summaries]
    stopped = any(s["stopped_by_max_seconds"] for s in summaries)
    summary = {
        "run": args.name, "mode": SYSTEM, "topology": "ring", "peers": n, "learners_per_peer": 1,
        # The config's epochs, as `starling launch`; the epochs trained when --max-seconds cut the run short
        # (text: always the epochs trained, as run.steps sizes a text job).
        "epochs": (min(s["epochs"] for s in summaries) if stopped or is_text(config) else config["run"]["epochs"]),
        "steps": min(s["steps"] for s in summaries),
        "samples": sum(s["samples"] for s in summaries),
        "wall_seconds": max(s["wall_seconds"] for s in summaries),
        "samples_per_second": sum(s["samples_per_second"] for s in summaries),
        "train_loss": finite(sum(s["train_loss"] if s["train_loss"] is not None else math.nan
                                 for s in summaries) / n),
        "bytes_sent": sum(s["bytes_sent"] for s in summaries),
        "bytes_received": sum(s["bytes_received"] for s in summaries),
        "bytes_computed_not_measured": True,
        "model_checksum": checksums,
        "identical_models": all(c == checksums[0] for c in checksums),
        "peer_summaries": files,
        "system": SYSTEM, "torch_version": summaries[0]["torch_version"],
        "model": config["model"]["kind"], "batch": config["optimizer"]["batch"],
        "partition": config["data"]["partition"],
        "stopped_by_max_seconds": stopped,
    }
    summary.update((text_results if is_text(config) else image_results)(config, summaries))
    return summary


def outcome_line(summary):
    """The launcher's last line: the result, its amount of training and its target."""
    ttt = summary["time_to_target_seconds"]
    if "val_bpb" in summary:
        result = "val_bpb %.4f (worst %.4f) after %d steps" % (summary["val_bpb"], summary["val_bpb_max"], summary["steps"])
        target = "target %.4f bpb" % summary["target_bpb"]
    else:
        result = "test_accuracy %.4f (min %.4f) after %.2f epochs" % (
            summary["test_accuracy"], summary["test_accuracy_min"], summary["epochs"])
        target = "target %.4f" % summary["target_accuracy"]
    reached = "%s reached after %.1f s" % (target, ttt) if ttt is not None else "%s not reached" % target
    return "%s in %.1f s (%.0f samples/s); %s" % (result, summary["wall_seconds"], summary["samples_per_second"], reached)


def launch(args, config):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    base = [sys.executable, os.path.abspath(__file__), "--config", args.config, "--procs", str(args.procs),
            "--out-dir", args.out_dir, "--name", args.name, "--port", str(args.port), "--model-json", args.model_json,
            "--config-json", args.config_json]
    for item in args.set:
        base += ["--set", item]
    if args.max_seconds is not None:
        base += ["--max-seconds", repr(args.max_seconds)]
    files = ["%s/%s-peer%d.summary.json" % (args.out_dir, args.name, r) for r in range(args.procs)]
    for path in files:
        if os.path.exists(path):
            os.remove(path)
    length = "%d steps" % max(1, config["run"]["steps"]) if is_text(config) else "%g epochs" % config["run"]["epochs"]
    print("[%s] %d process(es) of '%s': %s model, batch %d per process, %s, gloo on 127.0.0.1:%d" % (
        SYSTEM, args.procs, args.name, config["model"]["kind"], config["optimizer"]["batch"], length, args.port),
        file=sys.stderr, flush=True)
    children = [subprocess.Popen(base + ["--rank", str(r)], env=env, preexec_fn=die_with_parent)
                for r in range(args.procs)]

    def stop_all(signum=None, frame=None):
        for c in children:
            if c.poll() is None:
                c.terminate()
        if signum is not None:
            sys.exit(128 + signum)

    signal.signal(signal.SIGINT, stop_all)
    signal.signal(signal.SIGTERM, stop_all)
    failed = None
    running = list(children)
    while running:
        for c in list(running):
            rc = c.poll()
            if rc is None:
                continue
            running.remove(c)
            if rc != 0 and failed is None:
                failed = (children.index(c), rc)
                stop_all()
        time.sleep(0.05)
    if failed is not None:
        fail("rank %d exited with status %d; stopped the others" % failed, 1)
    summary = aggregate(args, config, files)
    path = "%s/%s.summary.json" % (args.out_dir, args.name)
    write_json(path, summary)
    print("[%s] done: %s; summary %s" % (SYSTEM, outcome_line(summary), path), file=sys.stderr, flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True, help="Starling TOML config")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override a config key, as starling's --set")
    p.add_argument("--procs", type=int, default=0,
                   help="DDP processes (default: the config's [[peer]] count, or 1)")
    p.add_argument("--out-dir", default=None, help="output folder (default: run.out_dir)")
    p.add_argument("--name", default=None, help="names the output files (default: run.name)")
    p.add_argument("--port", type=int, default=0, help="Gloo rendezvous port on 127.0.0.1 (default: a free one)")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="stop training at the next step after this many seconds of wall clock")
    p.add_argument("--starling", default=None,
                   help="the starling binary that resolves the config and exports its model and a non-iid partition "
                        "(default: $STARLING, PATH, build/cli/starling)")
    p.add_argument("--rank", type=int, default=None, help=argparse.SUPPRESS)  # set by the launcher
    p.add_argument("--model-json", default=None, help=argparse.SUPPRESS)  # written by the launcher
    p.add_argument("--config-json", default=None, help=argparse.SUPPRESS)  # written by the launcher
    args = p.parse_args()
    if args.procs < 0 or args.procs > 256:
        p.error("--procs: expected 1..256")
    if args.max_seconds is not None and not args.max_seconds > 0:
        p.error("--max-seconds: expected a positive number")
    if args.port < 0 or args.port > 65535:
        p.error("--port: expected 0..65535")
    return args


def main():
    args = parse_args()
    if args.rank is not None:
        if not 0 <= args.rank < args.procs or not args.port or not args.model_json or not args.config_json:
            fail("--rank is set by the launcher", 2)
        with open(args.config_json) as f:
            config = json.load(f)
        if is_text(config):
            from torch_ddp_text import run_text_rank  # only text ranks need it
            run_text_rank(args, config, args.rank, partition_path(args))
        else:
            run_rank(args, config, args.rank)
        return
    args.starling = starling_binary(args)
    try:
        config = resolved_config(args.starling, args.config, args.set)
    except StarlingError as e:
        fail(str(e), 2 if e.code == 2 else 1)
    args.procs = args.procs or max(1, len(config.get("peer", [])))
    args.out_dir = args.out_dir or config["run"]["out_dir"]
    args.name = args.name or config["run"]["name"]
    if config["node"]["learners"] != 1:
        print("[%s] warning: node.learners = %s: the DDP reference runs one replica per process" % (
            SYSTEM, json.dumps(config["node"]["learners"])), file=sys.stderr, flush=True)
    why = missing_data(config)
    if why:
        fail(why, 1 if config["data"]["dataset"] == "fashion-mnist" else 2)
    os.makedirs(args.out_dir, exist_ok=True)
    try:
        description = describe(args.starling, args.config, args.set)
    except StarlingError as e:
        fail(str(e), 2 if e.code == 2 else 1)
    args.model_json = os.path.join(args.out_dir, args.name + ".model.json")
    write_json(args.model_json, description)
    args.config_json = os.path.join(args.out_dir, args.name + ".config.json")
    write_json(args.config_json, config)
    export_partition(args, config)
    args.port = args.port or free_port()
    launch(args, config)


if __name__ == "__main__":
    main()
