#!/usr/bin/python3
"""torch_gpt.py: the PyTorch reference for a Starling text config (configs/fortunes-gpt.toml).

Trains the GPT that `starling model --json` exports (starling_model.torch_gpt) on the same
text, split and steps as `starling train`: the files data.path lists (regular files in
name order; links, hidden files and `.dat` indexes skipped), each file's last
floor(bytes * validation_fraction) bytes held out; batches of windows of context + 1 bytes
whose starts are drawn uniformly among every training start (Starling draws with its own
generator: same distribution, other windows); the loss at every position against the next
byte; AdamW(foreach=True) on nanoGPT's groups (matrices decayed), global-norm clipping,
Starling's warm-up then cosine schedule; validation over every window Starling validates
on (stride context). One thread, no DataLoader. Prints one line per validation and a JSON
summary with val_bpb and tokens/s.

  bench/torch_gpt.py --starling build/cli/starling --config configs/fortunes-gpt.toml [--set run.steps=500]
"""
import argparse
import json
import math
import os
import stat
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from starling_config import resolved_config  # noqa: E402
from starling_model import describe, torch_model  # noqa: E402


def text_files(path):
    """The files Starling reads at `path` (learners/text_corpus.h)."""
    if os.path.isfile(path):
        return [path]
    files = []
    for name in os.listdir(path):
        full = os.path.join(path, name)
        st = os.lstat(full)
        if name.startswith(".") or name.endswith(".dat") or not stat.S_ISREG(st.st_mode):
            continue
        files.append(full)
    return sorted(files)


def corpus(path, fraction):
    """(bytes, [(begin, train_end, end)]) of every file back to back."""
    data, spans = bytearray(), []
    for f in text_files(path):
        with open(f, "rb") as fh:
            b = fh.read()
        begin = len(data)
        data += b
        spans.append((begin, begin + len(b) - int(len(b) * fraction), begin + len(b)))
    return bytes(data), spans


def adamw(model, o):
    """AdamW(foreach=True) on nanoGPT's groups: matrices (p.dim() >= 2) decayed, the rest not;
    `o` the resolved config's [optimizer]."""
    import torch

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": o["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, foreach=True, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=1e-8)


def lr_at(step, c, total):
    """Starling's schedule (learners/schedule.h): linear warm-up, then cosine to min_lr."""
    o = c["optimizer"]
    lr, warm = o["lr"], o["warmup_steps"]
    if step < warm:
        return lr * (step + 1) / warm
    if o["schedule"] != "cosine":
        return lr
    progress = (step - warm) / max(1, total - warm)
    return o["min_lr"] + (lr - o["min_lr"]) * (1 + math.cos(math.pi * progress)) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--starling", default="build/cli/starling")
    ap.add_argument("--config", required=True)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--summary", help="write the JSON summary here too")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    c = resolved_config(args.starling, args.config, args.overrides)
    d = describe(args.starling, args.config, args.overrides)
    torch.manual_seed(c["run"]["seed"])
    model = torch_model(d)
    context, batch, steps = d["context"], c["optimizer"]["batch"], max(1, c["run"]["steps"])
    window = context + 1
    data, spans = corpus(c["data"]["path"], c["data"]["validation_fraction"])
    tokens = torch.frombuffer(bytearray(data), dtype=torch.uint8).long()

    # Training starts: every start of every file's training part, uniformly.
    counts = torch.tensor([max(0, te - b - window + 1) for b, te, _ in spans], dtype=torch.long)
    firsts = torch.tensor([b for b, _, _ in spans], dtype=torch.long)
    cumulative = torch.cumsum(counts, 0)
    val_starts = torch.tensor([at for _, te, e in spans for at in range(te, e - window + 1, window - 1)], dtype=torch.long)
    offsets = torch.arange(window)

    def windows(starts):
        w = tokens[starts[:, None] + offsets]
        return w[:, :-1], w[:, 1:]

    def draw(gen):
        r = torch.randint(int(cumulative[-1]), (batch,), generator=gen)
        f = torch.searchsorted(cumulative, r, right=True)
        return firsts[f] + r - (cumulative[f] - counts[f])

    def validate():
        model.eval()
        total = 0.0
        with torch.no_grad():
            for i in range(0, len(val_starts), 32):
                x, y = windows(val_starts[i:i + 32])
                total += F.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="sum").item()
        model.train()
        return total / (len(val_starts) * context)

    o = c["optimizer"]
    opt = adamw(model, o)
    gen = torch.Generator().manual_seed(c["run"]["seed"])
    eval_steps = c["run"]["eval_steps"]
    print("torch_gpt: %d parameters, batch %d, context %d, %d steps, torch %s, 1 thread" %
          (sum(p.numel() for p in model.parameters()), batch, context, steps, torch.__version__), flush=True)
    train_seconds, loss_sum, loss_count, val = 0.0, 0.0, 0, None
    for step in range(steps):
        t0 = time.perf_counter()
        for g in opt.param_groups:
            g["lr"] = lr_at(step, c, steps)
        x, y = windows(draw(gen))
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), o["clip_norm"])
        opt.step()
        train_seconds += time.perf_counter() - t0
        loss_sum, loss_count = loss_sum + loss.item(), loss_count + 1
        if (eval_steps and (step + 1) % eval_steps == 0) or step + 1 == steps:
            val = validate()
            print("step %d  train_loss %.4f  val_loss %.4f  val_bpb %.4f  %.0f tokens/s" %
                  (step + 1, loss_sum / loss_count, val, val / math.log(2), (step + 1) * batch * context / train_seconds),
                  flush=True)
            loss_sum, loss_count = 0.0, 0
    summary = {"system": "pytorch", "torch": torch.__version__, "steps": steps, "batch": batch, "context": context,
               "val_loss": val, "val_bpb": val / math.log(2), "train_seconds": train_seconds,
               "tokens_per_second": steps * batch * context / train_seconds}
    print(json.dumps(summary))
    if args.summary:
        with open(args.summary, "w") as fh:
            json.dump(summary, fh)
            fh.write("\n")


if __name__ == "__main__":
    main()
