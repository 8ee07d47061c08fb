#!/usr/bin/python3
"""compare_torch.py: single-thread training throughput of Starling against PyTorch.

Trains the same model at the same batch with SGD + Nesterov momentum on Fashion-MNIST for
the same number of samples: PyTorch in this process (torch.set_num_threads(1)), Starling as
`starling train` with the native and the oneDNN kernel backend. The three run interleaved
(torch, native, onednn, torch, ...) so clock and load drift hit all alike; the median of the
repeats is reported. Only training time counts: PyTorch's clock starts after a few warm-up
steps, Starling's summary JSON reports samples_per_second over training time without
evaluation.

Models (padding 0, ReLU after every hidden layer):
  mlp: 784-256-128-10
  cnn: conv5x5x32 - maxpool2 - conv5x5x64 - maxpool2 - dense128 - dense10

Usage:
  /usr/bin/python3 bench/compare_torch.py --starling build-kernels/cli/starling \
      [--models mlp,cnn] [--batches 8,32] [--samples N] [--repeats R]
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# One thread for every library PyTorch may call into (its OpenBLAS reads this at load time,
# before torch.set_num_threads can apply); Starling runs with kernels.threads=1.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from torch_ddp import read_idx  # noqa: E402  (bench/ is on sys.path when run as a script)

DATA_DIR = "/usr/share/datasets/fashion-mnist"
CONFIGS = {"mlp": "configs/fmnist-mlp.toml", "cnn": "configs/fmnist-cnn.toml"}
# Same optimiser settings as the shipped configs (lr, momentum, nesterov, weight decay).
OPTIM = {"mlp": dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4),
         "cnn": dict(lr=0.03, momentum=0.9, nesterov=True, weight_decay=1e-4)}
TRAIN_SIZE = 60000
WARMUP_STEPS = 20


def load_train():
    """Training images normalised like Starling, (x/255 - mean)/std with the set's own stats."""
    x = read_idx(os.path.join(DATA_DIR, "train-images-idx3-ubyte.gz")).astype(np.float32) / 255.0
    y = read_idx(os.path.join(DATA_DIR, "train-labels-idx1-ubyte.gz")).astype(np.int64)
    x = (x - x.mean()) / x.std()
    return torch.from_numpy(x).unsqueeze(1).contiguous(), torch.from_numpy(y)


def make_model(kind):
    nn = torch.nn
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                             nn.Linear(128, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 4 * 4, 128), nn.ReLU(), nn.Linear(128, 10))


def torch_rate(kind, batch, samples, data):
    """Samples per second of PyTorch training `samples` samples (after warm-up steps)."""
    x, y = data
    torch.manual_seed(1)
    model = make_model(kind)
    opt = torch.optim.SGD(model.parameters(), **OPTIM[kind])
    loss_fn = torch.nn.CrossEntropyLoss()
    steps = max(1, samples // batch)
    order = torch.randperm(TRAIN_SIZE)

    def step(i):
        idx = order[(i * batch) % (TRAIN_SIZE - batch): (i * batch) % (TRAIN_SIZE - batch) + batch]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        opt.step()

    for i in range(WARMUP_STEPS):
        step(i)
    t0 = time.perf_counter()
    for i in range(steps):
        step(WARMUP_STEPS + i)
    return steps * batch / (time.perf_counter() - t0)


def starling_rate(binary, kind, batch, samples, backend, workdir):
    """Samples per second from Starling's summary JSON for one `starling train` run."""
    summary = os.path.join(workdir, "summary-%s-%d-%s.json" % (kind, batch, backend))
    cmd = [binary, "train", "--config", CONFIGS[kind], "--summary", summary,
           "--set", "optimizer.batch=%d" % batch,
           "--set", "run.epochs=%.6f" % (samples / TRAIN_SIZE),
           "--set", "run.eval_every=1000",
           "--set", "node.threads=1",
           "--set", "kernels.threads=1",
           "--set", "kernels.backend=%s" % backend,
           "--set", "run.out_dir=%s" % workdir]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), done.returncode, done.stderr[-2000:]))
    with open(summary) as f:
        return float(json.load(f)["samples_per_second"])


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--starling", default="build/cli/starling", help="starling binary")
    p.add_argument("--models", default="mlp,cnn")
    p.add_argument("--batches", default="8,32")
    p.add_argument("--samples", type=int, default=0,
                   help="samples per run (default: 32000 for mlp, 4000 for cnn)")
    p.add_argument("--repeats", type=int, default=3)
    return p.parse_args()


def main():
    args = parse_args()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    data = load_train()
    rows = []
    with tempfile.TemporaryDirectory(prefix="compare_torch_") as workdir:
        for kind in args.models.split(","):
            samples = args.samples or (32000 if kind == "mlp" else 4000)
            for batch in [int(b) for b in args.batches.split(",")]:
                rates = {"torch": [], "native": [], "onednn": []}
                for _ in range(args.repeats):
                    rates["torch"].append(torch_rate(kind, batch, samples, data))
                    for backend in ("native", "onednn"):
                        rates[backend].append(starling_rate(args.starling, kind, batch, samples, backend, workdir))
                med = {k: statistics.median(v) for k, v in rates.items()}
                rows.append((kind, batch, med))
                print("%s b%d: %s" % (kind, batch, {k: [round(x) for x in v] for k, v in rates.items()}),
                      file=sys.stderr, flush=True)
    print("%-5s %5s %12s %12s %12s %10s %10s %10s" % ("model", "batch", "torch/s", "native/s", "onednn/s",
                                                     "nat/torch", "dnn/torch", "nat/dnn"))
    for kind, batch, m in rows:
        print("%-5s %5d %12.0f %12.0f %12.0f %10.2f %10.2f %10.2f" % (
            kind, batch, m["torch"], m["native"], m["onednn"], m["native"] / m["torch"],
            m["onednn"] / m["torch"], m["native"] / m["onednn"]))


if __name__ == "__main__":
    main()
