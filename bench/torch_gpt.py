#!/usr/bin/python3
"""torch_gpt.py: the PyTorch reference for a Starling text config (configs/fortunes-gpt.toml).

Trains the GPT that `starling model --json` exports (starling_model.torch_gpt) on the same
text, split and steps as `starling train`: the files and training ranges `starling
partition` exports (bench/starling_text.py), each file's last floor(bytes *
validation_fraction) bytes held out; batches of windows of context + 1 bytes whose starts
are drawn uniformly among every training start (PyTorch's generator, not Starling's: same
distribution, other windows); the loss at every position against the next byte; the
[optimizer] section as bench/starling_optimizer.py maps it (AdamW(foreach=True) on nanoGPT's
groups, global-norm clipping, Starling's warm-up then cosine schedule); validation over
every window Starling validates on (stride context). One thread, no DataLoader. Prints one
line per validation and a JSON summary with val_bpb and tokens/s.

  bench/torch_gpt.py --starling build/cli/starling --config configs/fortunes-gpt.toml [--set run.steps=500]
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from starling_config import resolved_config  # noqa: E402
from starling_model import describe, torch_model  # noqa: E402
from starling_optimizer import Schedule, clip, make_optimizer  # noqa: E402
from starling_text import TextJob, bits_per_byte, export  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
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
    text = TextJob(export(args.starling, args.config, args.overrides))
    torch.manual_seed(c["run"]["seed"])
    model = torch_model(d)
    context, batch, steps = d["context"], c["optimizer"]["batch"], max(1, c["run"]["steps"])

    # Training starts: every start of the node's ranges, uniformly.
    part = text.parts[0]
    counts = torch.tensor([max(0, end - begin - text.window + 1) for begin, end in part], dtype=torch.long)
    firsts = torch.tensor([begin for begin, _ in part], dtype=torch.long)
    cumulative = torch.cumsum(counts, 0)

    def draw(gen):
        r = torch.randint(int(cumulative[-1]), (batch,), generator=gen)
        f = torch.searchsorted(cumulative, r, right=True)
        return firsts[f] + r - (cumulative[f] - counts[f])

    o = c["optimizer"]
    opt = make_optimizer(o, model)
    schedule = Schedule(o, int(cumulative[-1]) // batch, steps)
    gen = torch.Generator().manual_seed(c["run"]["seed"])
    eval_steps = c["run"]["eval_steps"]
    print("torch_gpt: %d parameters, batch %d, context %d, %d steps, torch %s, 1 thread" %
          (sum(p.numel() for p in model.parameters()), batch, context, steps, torch.__version__), flush=True)
    train_seconds, loss_sum, loss_count, val = 0.0, 0.0, 0, None
    for step in range(steps):
        t0 = time.perf_counter()
        for g in opt.param_groups:
            g["lr"] = schedule.lr(step)
        x, y = text.windows(draw(gen))
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip(o, model)
        opt.step()
        train_seconds += time.perf_counter() - t0
        loss_sum, loss_count = loss_sum + loss.item(), loss_count + 1
        if (eval_steps and (step + 1) % eval_steps == 0) or step + 1 == steps:
            val = text.validation_loss(model)
            print("step %d  train_loss %.4f  val_loss %.4f  val_bpb %.4f  %.0f tokens/s" %
                  (step + 1, loss_sum / loss_count, val, bits_per_byte(val), (step + 1) * batch * context / train_seconds),
                  flush=True)
            loss_sum, loss_count = 0.0, 0
    summary = {"system": "pytorch", "torch": torch.__version__, "steps": steps, "batch": batch, "context": context,
               "val_loss": val, "val_bpb": bits_per_byte(val), "train_seconds": train_seconds,
               "tokens_per_second": steps * batch * context / train_seconds}
    print(json.dumps(summary))
    if args.summary:
        with open(args.summary, "w") as fh:
            json.dump(summary, fh)
            fh.write("\n")


if __name__ == "__main__":
    main()
