#!/usr/bin/python3
"""The scaling report: `starling simulate` for every exchange mode, network and model, then
speedup-vs-peers plots (1 to 1024 peers) with Das et al.'s point, Amdahl's law and the
communication bound for reference.

  scripts/plot_scaling.py [--starling build/cli/starling] [--out results/scaling]

Writes OUT/<model>-<mode>-<network>.json (one `starling simulate --json` each),
OUT/scaling.json (all of them, plus the reference curves) and OUT/scaling-<model>.png.
Needs Debian's python3-matplotlib for the plots; the JSON is written without it.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"mlp": "configs/fmnist-mlp.toml", "cnn": "configs/fmnist-cnn.toml"}
MODES = {  # label: overrides of the single-node config
    "all-reduce": ['exchange.mode="allreduce"'],
    "local SGD (H=8)": ['exchange.mode="local-sgd"', "exchange.period=8"],
    "gossip, ring": ['exchange.mode="gossip"', 'exchange.topology="ring"'],
    "gossip, exponential (SGP)": ['exchange.mode="gossip"', 'exchange.topology="one-peer-exponential"'],
    "CHOCO top-1%, ring": ['exchange.mode="gossip"', 'exchange.topology="ring"', 'compression.codec="topk"',
                           "compression.density=0.01"],
}
NETWORKS = {"10gbit": "10 Gbit/s, 50 µs", "1gbit": "1 Gbit/s, 50 µs"}
PEERS = "1-1024"
DAS = (128, 90)  # Das et al.: synchronous SGD, 90x on 128 nodes
# Amdahl's law through Das et al.'s point: 1/(f + (1-f)/128) = 90.
AMDAHL_F = (DAS[0] / DAS[1] - 1) / (DAS[0] - 1)


def slug(text):
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-").replace("--", "-")


def simulate(starling, model, mode, network, out):
    path = os.path.join(out, f"{model}-{slug(mode)}-{network}.json")
    cmd = [starling, "simulate", "--config", os.path.join(ROOT, MODELS[model]), "--peers", PEERS, "--network", network,
           "--json", path]
    for s in MODES[mode]:
        cmd += ["--set", s]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)}\n{done.stderr}")
    print(done.stdout.split("\n")[0], f"on {network}", flush=True)
    return json.load(open(path))


def amdahl(p):
    return 1 / (AMDAHL_F + (1 - AMDAHL_F) / p)


def plot(results, model, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(14, 6.2), sharey=True)
    peers = [r["peers"] for r in next(iter(results.values()))["predictions"]]
    colors = dict(zip(MODES, ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]))
    for ax, network in zip(axes, NETWORKS):
        ax.plot(peers, peers, color="0.6", lw=1, ls=":", label="linear (ideal)")
        ax.plot(peers, [amdahl(p) for p in peers], color="0.35", lw=1.2, ls="-.",
                label=f"Amdahl, serial {AMDAHL_F:.2%} (through Das et al.)")
        ax.plot(*DAS, marker="*", ms=16, color="gold", mec="black", ls="none", label="Das et al.: 90x at 128 nodes")
        for mode in MODES:
            rows = results[(mode, network)]["predictions"]
            ax.plot([r["peers"] for r in rows], [r["speedup"] for r in rows], marker="o", ms=4, lw=2,
                    color=colors[mode], label=mode)
        bound = [(r["peers"], r["comm_bound_speedup"]) for r in results[("all-reduce", network)]["predictions"]
                 if r["comm_bound_speedup"]]
        ax.plot(*zip(*bound), color=colors["all-reduce"], lw=1.2, ls="--", label="all-reduce communication bound")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlim(1, 1024)
        ax.set_ylim(1 / 16, 1024)
        ax.set_xticks(peers)
        ax.set_xticklabels([str(p) for p in peers])
        ticks = [2.0 ** k for k in range(-4, 11)]
        ax.set_yticks(ticks)
        ax.set_yticklabels([f"{t:g}" for t in ticks])
        ax.set_title(f"{model.upper()} on {NETWORKS[network]} links (one peer per host)")
        ax.set_xlabel("peers")
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_ylabel("speedup over one peer (samples/s)")
    axes[1].legend(loc="upper left", fontsize=8.5, framealpha=0.9)
    step = next(iter(results.values()))["measured"]["step_seconds"]
    batch = next(iter(results.values()))["batch"]
    fig.suptitle(f"Predicted scaling of the Fashion-MNIST {model.upper()} (batch {batch} per peer, "
                 f"step {step * 1e3:.2f} ms measured here) — starling simulate", fontsize=12)
    fig.tight_layout()
    path = os.path.join(out, f"scaling-{model}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starling", default=os.path.join(ROOT, "build", "cli", "starling"))
    parser.add_argument("--out", default=os.path.join(ROOT, "results", "scaling"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    everything = {"das_et_al": {"peers": DAS[0], "speedup": DAS[1]}, "amdahl_serial_fraction": AMDAHL_F, "runs": []}
    for model in MODELS:
        results = {}
        for network in NETWORKS:
            for mode in MODES:
                results[(mode, network)] = simulate(args.starling, model, mode, network, args.out)
                everything["runs"].append({**results[(mode, network)], "model": model, "label": mode, "network": network})
        try:
            plot(results, model, args.out)
        except ImportError:
            print("matplotlib missing (apt-get install python3-matplotlib): plots skipped", file=sys.stderr)
    with open(os.path.join(args.out, "scaling.json"), "w") as f:
        json.dump(everything, f, indent=1)


if __name__ == "__main__":
    main()
