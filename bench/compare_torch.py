#!/usr/bin/python3
"""compare_torch.py: training throughput of Starling against PyTorch at its fastest plain form.

Trains the same model at the same batch with SGD + Nesterov momentum and weight decay (the
shipped configs' settings) on Fashion-MNIST for the same number of samples: PyTorch in this
process, Starling as `starling train` with the native and the oneDNN kernel backend. The
runs are interleaved (torch, native, onednn, torch, ...) so that clock and load drift hit
all alike; the median of the repeats is reported, with ratios.

PyTorch runs at its fastest plain form: `torch.optim.SGD(..., foreach=True)` (one fused
multi-tensor update instead of a loop over parameters), batches indexed straight out of one
in-memory tensor (no DataLoader), gradients set to None rather than zeroed. Only training
time counts: PyTorch's clock starts after a few warm-up steps, Starling's summary JSON
reports samples_per_second over training time without evaluation.

Two scopes:
  core     one thread each: PyTorch with torch.set_num_threads(1), Starling with one learner
           and kernels.threads=1 (the per-core comparison);
  machine  the whole machine: PyTorch at its best thread count (every count from 1 to the
           cores is timed in each repeat, and the best median is the anchor), Starling with
           one learner per core (SMA, node.threads = cores), each learner at the same batch.

Models: the shipped configs' (configs/fmnist-mlp.toml, configs/fmnist-cnn.toml), PyTorch's
built from `starling model --json` (bench/starling_model.py) and its SGD settings read from
`starling config --json` (bench/starling_config.py).

`--models gpt` (scope core only): configs/fortunes-gpt.toml, nanoGPT's CPU configuration, in
tokens/s at --batches windows of 64 bytes for --steps steps after warm-up; `--models gpt-10m`
the same for configs/fortunes-gpt-10m.toml (the gpt-10m preset, windows of 256 bytes). PyTorch trains the
exported GPT with AdamW(foreach=True) on nanoGPT's groups and clip_grad_norm_, on windows
indexed out of the fortunes bytes in one tensor. Starling runs in one of two clocks (--clock):
`wall`, `starling train` per backend (its summary's tokens/s, validation left out) against
PyTorch's wall time; `thread`, bench_step's GPT step per backend (the same layers, loss and
AdamW, timed by the thread's CPU time) against PyTorch's process CPU time, for a host shared
with other work. Each repeat first measures the FMA peak (`bench_step --peak`, the best
kept), and every party's tokens/s is also given as a share of it: tokens/s times the step's
GEMM FLOPs a token.

--isa scalar|avx2|avx512 caps every party at that instruction set, for a like-for-like
comparison on a CPU that has more: Starling through STARLING_ISA, its oneDNN backend through
ONEDNN_MAX_CPU_ISA, PyTorch's ATen kernels through ATEN_CPU_CAPABILITY and its OpenBLAS through
OPENBLAS_CORETYPE (Haswell for avx2, SkylakeX for avx512, Prescott for scalar). Each is read when
the party loads, so the variables are set before torch is imported. The ISA each party actually
ran is printed first: Starling's and oneDNN's from `starling --version`, ATen's from
torch.backends.cpu.get_cpu_capability() where this PyTorch has it (else from
torch.__config__.show()), OpenBLAS's from openblas_get_corename().

Usage:
  /usr/bin/python3 bench/compare_torch.py [--starling build/cli/starling] [--scope core|machine]
      [--models mlp,cnn] [--batches 8,32] [--samples N] [--repeats R] [--isa avx2] [--json FILE]
  /usr/bin/python3 bench/compare_torch.py --models gpt --batches 12 [--steps 40] [--clock wall|thread]
"""
import argparse
import ctypes
import re
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# OpenBLAS reads its thread count at load time, before torch.set_num_threads can apply; PyTorch's
# own intra-op pool is set per run below.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ISA_CAPS = {  # --isa: the variable each party reads at load, and its value
    "scalar": {"STARLING_ISA": "scalar", "ONEDNN_MAX_CPU_ISA": "SSE41", "ATEN_CPU_CAPABILITY": "default",
               "OPENBLAS_CORETYPE": "Prescott"},
    "avx2": {"STARLING_ISA": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2",
             "OPENBLAS_CORETYPE": "Haswell"},
    "avx512": {"STARLING_ISA": "avx512", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE", "ATEN_CPU_CAPABILITY": "avx512",
               "OPENBLAS_CORETYPE": "SkylakeX"},
}


def cap_isa_from_argv():
    """Sets --isa's variables in this process (torch reads them at import) and for Starling's runs."""
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        value = arg.split("=", 1)[1] if arg.startswith("--isa=") else argv[i + 1] if arg == "--isa" and i + 1 < len(argv) else None
        if value in ISA_CAPS:
            os.environ.update(ISA_CAPS[value])


cap_isa_from_argv()

import numpy as np  # noqa: E402
import torch  # noqa: E402

from starling_config import resolved_config  # noqa: E402  (bench/ is on sys.path as a script)
from starling_model import describe, torch_model  # noqa: E402
from torch_ddp import read_idx  # noqa: E402
from starling_optimizer import clip, make_optimizer  # noqa: E402
from starling_text import TextJob, export  # noqa: E402

DATA_DIR = "/usr/share/datasets/fashion-mnist"
CONFIGS = {"mlp": "configs/fmnist-mlp.toml", "cnn": "configs/fmnist-cnn.toml", "resnet8": "configs/fmnist-resnet8.toml",
           "gpt": "configs/fortunes-gpt.toml", "gpt-10m": "configs/fortunes-gpt-10m.toml"}


def is_gpt(kind):
    return kind.startswith("gpt")


def optimizer_settings(starling, kind):
    """The config's SGD settings (lr, momentum, nesterov, weight decay), for PyTorch's SGD."""
    o = resolved_config(starling, CONFIGS[kind])["optimizer"]
    return {key: o[key] for key in ("lr", "momentum", "nesterov", "weight_decay")}


TRAIN_SIZE = 60000
WARMUP_STEPS = 20


def load_train():
    """Training images normalised like Starling, (x/255 - mean)/std with the set's own stats."""
    x = read_idx(os.path.join(DATA_DIR, "train-images-idx3-ubyte.gz")).astype(np.float32) / 255.0
    y = read_idx(os.path.join(DATA_DIR, "train-labels-idx1-ubyte.gz")).astype(np.int64)
    x = (x - x.mean()) / x.std()
    return torch.from_numpy(x).unsqueeze(1).contiguous(), torch.from_numpy(y)


def torch_rate(settings, description, batch, samples, data, threads):
    """Samples per second of PyTorch training `samples` samples on `threads` threads (after warm-up)."""
    x, y = data
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = torch_model(description)
    opt = torch.optim.SGD(model.parameters(), foreach=True, **settings)
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


def starling_summary(binary, kind, batch, samples, backend, learners, workdir):
    """Starling's summary JSON of one `starling train` run."""
    summary = os.path.join(workdir, "summary-%s-%d-%s.json" % (kind, batch, backend))
    cmd = [binary, "train", "--config", CONFIGS[kind], "--summary", summary,
           "--set", "optimizer.batch=%d" % batch,
           "--set", "run.epochs=%.6f" % (samples / TRAIN_SIZE),
           "--set", "run.eval_every=1000",
           "--set", "node.learners=%d" % learners,
           "--set", "node.threads=%d" % learners,
           "--set", "kernels.threads=1",
           "--set", "kernels.backend=%s" % backend,
           "--set", "run.out_dir=%s" % workdir]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), done.returncode, done.stderr[-2000:]))
    with open(summary) as f:
        return json.load(f)


def starling_rate(binary, kind, batch, samples, backend, learners, workdir):
    """Samples per second from Starling's summary JSON for one `starling train` run."""
    return float(starling_summary(binary, kind, batch, samples, backend, learners, workdir)["samples_per_second"])


def gpt_text(starling, kind):
    """The training bytes the GPT config reads (every file's training part, as Starling
    splits them), as one LongTensor."""
    job = TextJob(export(starling, CONFIGS[kind]))
    train = b"".join(job.corpus[begin:end] for part in job.parts for begin, end in part)
    return torch.frombuffer(bytearray(train), dtype=torch.uint8).long()


def torch_gpt_rate(starling, kind, description, batch, steps, text, clock):
    """Tokens per second of PyTorch training the exported GPT for `steps` steps (after warm-up),
    one thread, by wall time or by the process's CPU time."""
    import torch.nn.functional as F

    torch.set_num_threads(1)
    torch.manual_seed(1)
    model = torch_model(description)
    o = resolved_config(starling, CONFIGS[kind])["optimizer"]
    opt = make_optimizer(o, model)
    context = description["context"]
    offsets = torch.arange(context + 1)

    def step():
        w = text[torch.randint(len(text) - context - 1, (batch,))[:, None] + offsets]
        loss = F.cross_entropy(model(w[:, :-1]).flatten(0, 1), w[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip(o, model)
        opt.step()

    now = time.process_time if clock == "thread" else time.perf_counter
    for _ in range(max(2, steps // 10)):
        step()
    t0 = now()
    for _ in range(steps):
        step()
    return steps * batch * context / (now() - t0)


def bench_step_binary(starling):
    """bench_step of the build `starling` is in (build/cli/starling -> build/bench/step/bench_step)."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(starling))), "bench", "step", "bench_step")


def fma_peak(starling, kind, clock):
    """(GFLOP/s of the FMA peak a core at the capped ISA, the GPT's training FLOPs a token), from
    bench_step --peak, timed by `clock`."""
    cmd = [bench_step_binary(starling), "--peak", "--models", kind, "--clock", clock]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
    peak = json.loads(out.splitlines()[-1])
    return peak["fma_peak_gflops"], peak["gpt_flops_per_token"]


def starling_gpt_rate(binary, kind, batch, steps, backend, clock, workdir):
    """Tokens per second of Starling's GPT step: `starling train`'s summary (wall), or
    bench_step's GPT step timed by the thread's CPU time (thread)."""
    if clock == "thread":
        cmd = [bench_step_binary(binary), "--models", kind, "--batches", str(batch), "--steps", str(steps),
               "--clock", "thread", "--backend", backend]
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        found = re.search(r"([0-9.]+) tokens/s", done.stdout)
        if done.returncode != 0 or not found:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), done.returncode, done.stderr[-2000:]))
        return float(found.group(1))
    summary = os.path.join(workdir, "summary-%s-%d-%s.json" % (kind, batch, backend))
    cmd = [binary, "train", "--config", CONFIGS[kind], "--summary", summary,
           "--set", "optimizer.batch=%d" % batch, "--set", "run.steps=%d" % steps, "--set", "run.eval_steps=0",
           "--set", "kernels.threads=1", "--set", "kernels.backend=%s" % backend, "--set", "run.out_dir=%s" % workdir,
           "--set", "run.checkpoint_every=0"]  # the config's checkpoints are no part of the timing
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), done.returncode, done.stderr[-2000:]))
    with open(summary) as f:
        return float(json.load(f)["tokens_per_second"])


def measure_gpt(args, kind, batch, text, workdir):
    """Medians over the repeats of each party's tokens/s, interleaved, and the best FMA peak."""
    description = describe(args.starling, CONFIGS[kind])
    rates = {"torch": [], "native": [], "onednn": []}
    if args.baseline:
        rates["baseline"] = []
    peak, flops = 0.0, 0.0
    for _ in range(args.repeats):
        p, flops = fma_peak(args.starling, kind, args.clock)
        peak = max(peak, p)
        rates["torch"].append(torch_gpt_rate(args.starling, kind, description, batch, args.steps, text, args.clock))
        for backend in ("native", "onednn"):
            rates[backend].append(starling_gpt_rate(args.starling, kind, batch, args.steps, backend, args.clock, workdir))
        if args.baseline:
            rates["baseline"].append(starling_gpt_rate(args.baseline, kind, batch, args.steps, "native", args.clock, workdir))
    print("%s b%d: %s" % (kind, batch, {k: [round(x) for x in v] for k, v in rates.items()}), file=sys.stderr, flush=True)
    row = {"model": kind, "batch": batch, "clock": args.clock, "fma_peak_gflops": peak, "flops_per_token": flops}
    row.update({k: statistics.median(v) for k, v in rates.items()})
    pairs = [("native", "torch"), ("native", "onednn")] + ([("native", "baseline")] if args.baseline else [])
    row["paired"] = {"%s/%s" % pair: paired_ratios(rates[pair[0]], rates[pair[1]]) for pair in pairs}
    return row


def paired_ratios(ours, theirs):
    """The median, least and greatest of each repeat's ratio: runs taken minutes apart share
    the host's load, which the ratio of the medians does not pair up."""
    ratios = [a / b for a, b in zip(ours, theirs)]
    return statistics.median(ratios), min(ratios), max(ratios)


def print_gpt(rows):
    print("tokens/s a core, %s clock; %% of the FMA peak = tokens/s x the model's FLOPs a token / the peak (%.1f GFLOP/s)"
          % (rows[0]["clock"], rows[0]["fma_peak_gflops"]))
    print("%8s %5s %10s %10s %10s %10s %10s %10s %8s %8s %8s" % (
        "model", "batch", "torch/s", "native/s", "onednn/s", "nat/torch", "dnn/torch", "nat/dnn", "torch%", "native%", "onednn%"))
    for r in rows:
        share = {k: 100.0 * r[k] * r["flops_per_token"] * 1e-9 / r["fma_peak_gflops"] for k in ("torch", "native", "onednn")}
        print("%8s %5d %10.0f %10.0f %10.0f %10.2f %10.2f %10.2f %7.0f%% %7.0f%% %7.0f%%" % (
            r["model"], r["batch"], r["torch"], r["native"], r["onednn"], r["native"] / r["torch"], r["onednn"] / r["torch"],
            r["native"] / r["onednn"], share["torch"], share["native"], share["onednn"]))
        for pair, (median, low, high) in r["paired"].items():
            print("      %s repeat by repeat: median %.2f, %.2f-%.2f" % (pair, median, low, high))


def isas_in_use(starling):
    """One line per party: the instruction set each actually runs in this process and Starling's."""
    version = subprocess.run([starling, "--version"], stdout=subprocess.PIPE, text=True, check=True).stdout
    lines = [line for line in version.splitlines() if line.startswith(("isa:", "backends:"))]
    cpu = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
    if cpu:
        aten = "%s (torch.backends.cpu.get_cpu_capability)" % cpu()
    else:
        shown = [l.split(":", 1)[1].strip() for l in torch.__config__.show().splitlines() if "CPU capability usage:" in l]
        aten = "%s (torch.__config__.show(): PyTorch %s has no torch.backends.cpu.get_cpu_capability)" % (
            shown[0] if shown else "unknown", torch.__version__)
    lines.append("pytorch aten: " + aten)
    lines.append("pytorch openblas: " + openblas_core())
    return ["starling " + line for line in lines[:2]] + lines[2:]


def openblas_core():
    """The core OpenBLAS dispatches to, if PyTorch loaded OpenBLAS (openblas_get_corename)."""
    with open("/proc/self/maps") as f:
        libs = sorted({line.split()[-1] for line in f if "libopenblas" in line})
    if not libs:
        return "not loaded (PyTorch's BLAS is another)"
    lib = ctypes.CDLL(libs[0])
    lib.openblas_get_corename.restype = ctypes.c_char_p
    return lib.openblas_get_corename().decode()


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--starling", default="build/cli/starling", help="starling binary")
    p.add_argument("--scope", choices=("core", "machine"), default="core")
    p.add_argument("--models", default="mlp,cnn")
    p.add_argument("--batches", default="8,32")
    p.add_argument("--samples", type=int, default=0,
                   help="samples per run (default: 32000 for mlp, 4000 for cnn and resnet8; twice that for --scope machine)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--baseline", help="another starling binary (an earlier build) whose native backend runs "
                   "interleaved with the others: the before/after ratio of a change, against the same anchor")
    p.add_argument("--isa", choices=sorted(ISA_CAPS), help="cap every party at this instruction set (see above)")
    p.add_argument("--auto", action="store_true", help="also run kernels.backend=auto, interleaved: its rate "
                   "against the faster of native and oneDNN, and which backend it chose")
    p.add_argument("--steps", type=int, default=40, help="gpt: timed steps per run, after warm-up")
    p.add_argument("--clock", choices=("wall", "thread"), default="wall",
                   help="gpt: wall time, or CPU time (bench_step's thread clock, PyTorch's process clock)")
    p.add_argument("--json", help="also write the rows here")
    args = p.parse_args()
    if any(is_gpt(k) for k in args.models.split(",")) and args.scope != "core":
        p.error("--models gpt runs at --scope core only")
    if any(is_gpt(k) for k in args.models.split(",")) and args.auto:
        p.error("--auto runs with the image models only")
    return args


def measure(args, kind, batch, data, workdir):
    """Medians over the repeats: PyTorch's best thread count's rate, and Starling's per backend."""
    cores = os.cpu_count() if args.scope == "machine" else 1
    samples = (args.samples or (32000 if kind == "mlp" else 4000)) * (2 if args.scope == "machine" else 1)
    description = describe(args.starling, CONFIGS[kind])
    settings = optimizer_settings(args.starling, kind)
    torch_rates = {t: [] for t in range(1, cores + 1)}
    rates = {"native": [], "onednn": []}
    if args.baseline:
        rates["baseline"] = []
    if args.auto:
        rates["auto"] = []
    chosen = []  # the backends auto kept
    for _ in range(args.repeats):
        for t in torch_rates:
            torch_rates[t].append(torch_rate(settings, description, batch, samples, data, t))
        for backend in rates:
            binary = args.baseline if backend == "baseline" else args.starling
            summary = starling_summary(binary, kind, batch, samples, backend if backend != "baseline" else "native",
                                       cores, workdir)
            rates[backend].append(float(summary["samples_per_second"]))
            if backend == "auto":
                chosen.append(summary["backend"])
    best = max(torch_rates, key=lambda t: statistics.median(torch_rates[t]))
    print("%s b%d: torch by threads %s, starling %s" % (
        kind, batch, {t: [round(x) for x in v] for t, v in torch_rates.items()},
        {k: [round(x) for x in v] for k, v in rates.items()}), file=sys.stderr, flush=True)
    row = {"model": kind, "batch": batch, "scope": args.scope, "torch_threads": best, "starling_learners": cores,
           "torch": statistics.median(torch_rates[best])}
    row.update({k: statistics.median(v) for k, v in rates.items()})
    if args.auto:
        row["auto_chose"] = chosen
    return row


def main():
    args = parse_args()
    torch.set_num_interop_threads(1)
    for line in isas_in_use(args.starling):
        print(line)
    kinds = args.models.split(",")
    data = load_train() if any(not is_gpt(k) for k in kinds) else None
    texts = {k: gpt_text(args.starling, k) for k in kinds if is_gpt(k)}
    rows, gpt_rows = [], []
    with tempfile.TemporaryDirectory(prefix="compare_torch_") as workdir:
        for kind in kinds:
            for batch in [int(b) for b in args.batches.split(",")]:
                if is_gpt(kind):
                    gpt_rows.append(measure_gpt(args, kind, batch, texts[kind], workdir))
                else:
                    rows.append(measure(args, kind, batch, data, workdir))
    if gpt_rows:
        print_gpt(gpt_rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows + gpt_rows, f, indent=1)
    if not rows:
        return
    print("scope %s: PyTorch SGD(foreach=True) at its best thread count of 1..%d; Starling with one learner per thread"
          % (args.scope, rows[0]["starling_learners"]))
    print("%-5s %5s %8s %12s %8s %12s %12s %10s %10s %10s" % (
        "model", "batch", "threads", "torch/s", "learners", "native/s", "onednn/s", "nat/torch", "dnn/torch", "nat/dnn"))
    for r in rows:
        print("%-5s %5d %8d %12.0f %8d %12.0f %12.0f %10.2f %10.2f %10.2f" % (
            r["model"], r["batch"], r["torch_threads"], r["torch"], r["starling_learners"], r["native"], r["onednn"],
            r["native"] / r["torch"], r["onednn"] / r["torch"], r["native"] / r["onednn"]))
    if args.baseline:
        print("native against the baseline's native (%s): %s" % (args.baseline, ", ".join(
            "%s b%d %.3f" % (r["model"], r["batch"], r["native"] / r["baseline"]) for r in rows)))
    if args.auto:
        print("kernels.backend=auto against the faster backend: %s" % ", ".join(
            "%s b%d %.3f (chose %s)" % (r["model"], r["batch"], r["auto"] / max(r["native"], r["onednn"]),
                                        "/".join(r["auto_chose"])) for r in rows))


if __name__ == "__main__":
    main()
