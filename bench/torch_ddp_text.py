"""torch_ddp_text.py: one rank of bench/torch_ddp.py on a text config (data.dataset = "text").

Rank r of N trains the GPT of `starling model --json` (bench/starling_model.py's torch_gpt,
PyTorch's initialisation from torch.manual_seed(run.seed); DDP broadcasts rank 0's) as
Starling's peer r trains it, with its gradients averaged over the ranks by DDP every step.

Mirrored exactly:
  text       the files, their order, each file's validation part and every peer's training
             ranges under data.partition (iid, by-file, dirichlet), read from `starling
             partition`'s export (bench/starling_text.py), so the split has one definition.
  windows    each step's batch of optimizer.batch windows of context + 1 bytes: the starts
             Starling's peer r draws (bench/starling_sampling.py mirrors its sampler bit for bit).
  validation every validation window (stride context) after every run.eval_steps steps and
             after the last, val_loss in nats per byte and val_bpb = val_loss / ln 2.
  schedule   warm-up then cosine to min_lr over run.steps (bench/starling_optimizer.py).
  counting   epoch = windows drawn / the starts the rank's ranges offer; tokens = windows x
             context; tokens_per_second over the wall time less validation; time to target
             at the first validation at or below run.target_bpb.

Not mirrored:
  update     DDP averages the gradients, clips their mean to clip_norm and takes one AdamW
             step on every rank; Starling's all-reduce has each peer clip and step on its own
             gradient, then averages the models. With AdamW the two trajectories differ:
             that difference is what this reference measures.
  model init PyTorch's generator, not Starling's (the same distributions, other numbers).
  validation rank 0 validates and sends the result to the others (their models are the
             same); every Starling peer validates its own model.
  bytes      COMPUTED, not measured (ddp_rank.ring_bytes_per_step): a ring all-reduce of the
             fp32 gradients per step; exchange_seconds is left empty (DDP's all-reduce runs
             inside the backward, counted in compute_seconds).

Writes DIR/NAME-peer<rank>.metrics.csv with the columns of a Starling text peer
(TEXT_COLUMNS, job/language_model_kind.cpp's metrics_columns) and DIR/NAME-peer<rank>.summary.json
with a text peer's keys (val_loss, val_bpb, tokens, tokens_per_second, ...).
"""
import json
import math
import sys
import time

from ddp_rank import (SYSTEM, checksum, finish, finite, fmt, out_of_time, ring_bytes_per_step, shared_by_rank0,
                      start_group, wrap, write_json)
from starling_model import torch_model
from starling_optimizer import Schedule, clip, make_optimizer
from starling_sampling import WindowSampler, window_seed
from starling_text import TextJob, bits_per_byte

TEXT_COLUMNS = ("step,epoch,wall_seconds,samples,tokens,train_loss,val_loss,val_bpb,tokens_per_second,bytes_sent,"
                "bytes_received,compute_seconds,exchange_seconds")


def csv_row(p):
    """A metrics row in job/language_model_kind.cpp's format; exchange_seconds empty (see the docstring)."""
    return "%d,%.6f,%.3f,%d,%d,%s,%s,%s,%.1f,%d,%d,%.3f,\n" % (
        p["step"], p["epoch"], p["wall_seconds"], p["samples"], p["tokens"], fmt(p["train_loss"], "%.6f"),
        fmt(p["val_loss"], "%.6f"), fmt(p["val_bpb"], "%.6f"), p["tokens_per_second"], p["bytes"], p["bytes"],
        p["compute_seconds"])


class Trainer:
    """Rank `rank`'s model, optimizer, windows and counters."""

    def __init__(self, args, config, rank, text):
        import torch
        self.run, self.o, self.rank, self.procs, self.text = config["run"], config["optimizer"], rank, args.procs, text
        torch.manual_seed(self.run["seed"])
        with open(args.model_json) as f:
            self.model = torch_model(json.load(f))
        self.params = sum(p.numel() for p in self.model.parameters())
        self.net = wrap(self.model, args.procs)
        self.opt = make_optimizer(self.o, self.model)
        self.steps_total = max(1, self.run["steps"])
        self.sampler = WindowSampler(text.parts[rank], text.window, window_seed(self.run["seed"], rank))
        self.schedule = Schedule(self.o, self.sampler.starts() // self.o["batch"], self.steps_total)
        self.step_bytes = ring_bytes_per_step(self.params, args.procs)
        self.steps = self.samples = 0
        self.compute_seconds = self.eval_seconds = self.loss_sum = 0.0
        self.loss_count = 0

    def step(self):
        """One step: this rank's windows, the DDP backward, clipping and the optimizer."""
        import torch.nn.functional as F
        t0 = time.perf_counter()
        for group in self.opt.param_groups:
            group["lr"] = self.schedule.lr(self.steps)
        x, y = self.text.windows(self.sampler.batch(self.steps, self.o["batch"]))
        self.opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(self.net(x).flatten(0, 1), y.flatten())
        loss.backward()
        clip(self.o, self.model)
        self.opt.step()
        self.compute_seconds += time.perf_counter() - t0
        value = loss.item()
        if not math.isfinite(value):
            print("[%s rank %d] error: the loss diverged (%r) at step %d" % (SYSTEM, self.rank, value, self.steps),
                  file=sys.stderr, flush=True)
            sys.exit(1)
        self.loss_sum, self.loss_count = self.loss_sum + value, self.loss_count + 1
        self.samples += self.o["batch"]
        self.steps += 1

    def validate(self, start):
        """The validation row after the steps so far (rank 0's loss, shared)."""
        t0 = time.perf_counter()
        (val_loss,) = shared_by_rank0(self.rank, self.procs, lambda: (self.text.validation_loss(self.model),), 1)
        now = time.perf_counter()
        self.eval_seconds += now - t0
        wall = now - start
        context = self.text.context
        point = {"step": self.steps, "epoch": self.samples / self.sampler.starts(), "wall_seconds": wall,
                 "samples": self.samples, "tokens": self.samples * context,
                 "train_loss": self.loss_sum / max(1, self.loss_count), "val_loss": val_loss,
                 "val_bpb": bits_per_byte(val_loss),
                 "tokens_per_second": self.samples * context / max(wall - self.eval_seconds, 1e-9),
                 "bytes": self.steps * self.step_bytes, "compute_seconds": self.compute_seconds}
        self.loss_sum, self.loss_count = 0.0, 0
        return point


def summary_of(args, config, trainer, history, wall, time_to_target, stopped_early, threads):
    """The rank's summary, with a Starling text peer's keys (job/node_job.cpp's summarize and job/language_model_kind.cpp's)."""
    import torch
    last, t = history[-1], trainer
    train_seconds = max(wall - t.eval_seconds, 1e-9)
    return {
        "run": args.name, "mode": SYSTEM, "system": SYSTEM, "torch_version": torch.__version__,
        "peers": args.procs, "peer_id": t.rank, "learners_per_peer": 1, "model": config["model"]["kind"],
        "parameters": t.params, "batch": t.o["batch"], "context": t.text.context, "threads": threads,
        "steps": t.steps, "epochs": last["epoch"], "samples": t.samples, "tokens": t.samples * t.text.context,
        "wall_seconds": wall, "samples_per_second": t.samples / train_seconds,
        "tokens_per_second": t.samples * t.text.context / train_seconds, "train_loss": finite(last["train_loss"]),
        "val_loss": last["val_loss"], "val_bpb": last["val_bpb"], "target_bpb": t.run["target_bpb"],
        "time_to_target_seconds": time_to_target, "compute_seconds": t.compute_seconds, "exchange_seconds": None,
        "eval_seconds": t.eval_seconds, "stopped_by_max_seconds": stopped_early,
        "bytes_sent": t.steps * t.step_bytes, "bytes_received": t.steps * t.step_bytes,
        "bytes_computed_not_measured": True, "model_checksum": checksum(t.model),
        "partition": config["data"]["partition"],
    }


def run_text_rank(args, config, rank, export_path):
    """Rank `rank` on the text `export_path` describes (the launcher's `starling partition`
    export); writes its CSV and summary, then leaves the process."""
    import torch.distributed as dist

    with open(export_path) as f:
        text = TextJob(json.load(f))
    threads = start_group(args, config, rank)
    trainer = Trainer(args, config, rank, text)
    prefix = "%s/%s-peer%d" % (args.out_dir, args.name, rank)
    eval_steps, target = config["run"]["eval_steps"], config["run"]["target_bpb"]
    history, time_to_target, stopped_early = [], None, False
    with open(prefix + ".metrics.csv", "w") as csv:
        csv.write(TEXT_COLUMNS + "\n")

        def record():
            nonlocal time_to_target
            p = trainer.validate(start)
            history.append(p)
            csv.write(csv_row(p))
            csv.flush()
            if time_to_target is None and target > 0 and p["val_bpb"] <= target:
                time_to_target = p["wall_seconds"]
            if rank == 0:
                print("[%s rank 0] step %d  train_loss %.4f  val_loss %.4f  val_bpb %.4f  %.0f tokens/s  %.1f s" % (
                    SYSTEM, p["step"], p["train_loss"], p["val_loss"], p["val_bpb"], p["tokens_per_second"],
                    p["wall_seconds"]), file=sys.stderr, flush=True)

        dist.barrier()
        start = time.perf_counter()
        while trainer.steps < trainer.steps_total:
            if out_of_time(args, time.perf_counter() - start, trainer.steps):
                stopped_early = True
                if not history or history[-1]["step"] != trainer.steps:  # the last row is this step's
                    record()
                break
            trainer.step()
            if (eval_steps > 0 and trainer.steps % eval_steps == 0) or trainer.steps == trainer.steps_total:
                record()
        wall = time.perf_counter() - start
    summary = summary_of(args, config, trainer, history, wall, time_to_target, stopped_early, threads)
    write_json(prefix + ".summary.json", summary)
    finish(args.procs)
