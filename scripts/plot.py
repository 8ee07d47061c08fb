#!/usr/bin/python3
"""plot.py: the figures of a `starling experiment` folder.

Reads DIR/metrics.csv (long format: variant,repeat,system,peer, then the columns of a
per-peer metrics CSV, named by its header: an image run's with test_accuracy, a text run's
with val_bpb and tokens; docs/training.md and docs/language-models.md list them) and
DIR/summary.json ({"experiment", "target_accuracy", "variants": [{"name", "system",
"samples_per_second", "tokens_per_second", "bytes_sent", ...}]}) and writes into DIR, for an
image experiment:

  accuracy_vs_time.png   test accuracy against wall time
  accuracy_vs_epoch.png  test accuracy against epochs
  accuracy_vs_bytes.png  test accuracy against the bytes sent by all peers (log scale);
                         variants that sent nothing are left out and named in the title
  throughput.png         training samples/s of each variant, all peers together
  consensus_distance.png when the metrics carry consensus_distance (peers that exchange):
                         each variant's mean over peers and repeats against epochs (log
                         scale), how far an exchange moves a peer's model relative to its norm
  label_distribution.png when the variants carry label_counts (summary.json's
                         variants[].label_counts: [{"peer", "counts"}], each peer's training
                         samples per class): a bar per peer stacked by class, one panel per
                         distinct distribution (variants with the same one share a panel)

For a text experiment (the metrics have val_bpb), validation bits per byte, lower is better:

  bpb_vs_tokens.png      val_bpb against the training tokens of all peers
  bpb_vs_time.png        val_bpb against wall time
  bpb_vs_bytes.png       val_bpb against the bytes sent by all peers (log scale), as above
  throughput.png         tokens/s of each variant, all peers together (summary.json's
                         tokens_per_second, as the report's table has it)

and, for either, DIR/plots.txt: the names of the figures written, one a line (what
`starling experiment` links from report.md).

One line per variant: at each evaluation index, x is the mean over peers and repeats of
wall_seconds / epoch, or the bytes_sent (tokens) of all the variant's peers summed (mean over
repeats); y is the mean test accuracy (val_bpb) over peers and repeats, with a light band
from the lowest to the highest peer. The target accuracy is a dashed line. torch-ddp
variants are drawn dashed, and in their own colour in the throughput chart. Empty cells are
skipped.

Usage:
  /usr/bin/python3 scripts/plot.py DIR
Exit codes: 0 written, 2 DIR lacks metrics.csv or summary.json, they cannot be read, or the
metrics have neither test_accuracy nor val_bpb.
"""
import csv
import json
import math
import os
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

KEY_COLUMNS = ["variant", "repeat", "system", "peer"]
MANIFEST = "plots.txt"
# What the figures show: test accuracy (higher is better) for images, validation bits per
# byte (lower is better) for text. Each x axis: (file suffix, curve key, label, title).
ACCURACY = {"column": "test_accuracy", "label": "test accuracy", "prefix": "accuracy", "higher_is_better": True,
            "rate": "samples_per_second", "rate_unit": "samples/s",
            "axes": [("time", "wall", "wall time (s)", "over time"), ("epoch", "epoch", "epoch", "per epoch")]}
BPB = {"column": "val_bpb", "label": "validation bits per byte (lower is better)", "prefix": "bpb",
       "higher_is_better": False, "rate": "tokens_per_second", "rate_unit": "tokens/s",
       "axes": [("tokens", "tokens", "training tokens, all peers", "against tokens"),
                ("time", "wall", "wall time (s)", "over time")]}
REFERENCE = "torch-ddp"
REFERENCE_COLOUR = "#d95f02"
STARLING_COLOUR = "#1f77b4"
WIDTH, HEIGHT, DPI = 10.0, 6.0, 100  # 1000 x 600 px

plt.rcParams.update({"font.size": 11, "axes.titlesize": 13, "axes.labelsize": 12, "legend.fontsize": 10,
                     "xtick.labelsize": 10, "ytick.labelsize": 10})


def die(message):
    print("plot.py: error: %s" % message, file=sys.stderr)
    sys.exit(2)


def number(text):
    """A cell as a float; None when empty or not a finite number."""
    if text is None:
        return None
    text = text.strip()
    if not text or text.lower() in ("null", "none", "nan"):
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def json_number(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def read_inputs(folder):
    metrics_path, summary_path = os.path.join(folder, "metrics.csv"), os.path.join(folder, "summary.json")
    for path in (metrics_path, summary_path):
        if not os.path.isfile(path):
            die("%s: no such file (expected the output folder of `starling experiment`)" % path)
    try:
        with open(summary_path) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        die("%s: cannot read: %s" % (summary_path, e))
    if not isinstance(summary, dict) or not isinstance(summary.get("variants", []), list):
        die('%s: expected an object with a "variants" list' % summary_path)
    # variant -> repeat -> peer -> rows (dicts of floats / None), in file order.
    runs, systems, order = {}, {}, []
    try:
        with open(metrics_path, newline="") as f:
            reader = csv.DictReader(f)
            columns = reader.fieldnames or []
            missing = [c for c in KEY_COLUMNS + ["epoch", "wall_seconds"] if c not in columns]
            if missing:
                die("%s: missing column(s) %s" % (metrics_path, ", ".join(missing)))
            if not any(m["column"] in columns for m in (ACCURACY, BPB)):
                die("%s: neither %s nor %s among the columns" % (metrics_path, ACCURACY["column"], BPB["column"]))
            metric = BPB if BPB["column"] in columns else ACCURACY
            values = [c for c in columns if c not in KEY_COLUMNS]
            for row in reader:
                variant = (row.get("variant") or "").strip()
                if not variant:
                    continue
                if variant not in runs:
                    runs[variant] = {}
                    order.append(variant)
                if row.get("system"):
                    systems.setdefault(variant, row["system"].strip())
                peers = runs[variant].setdefault((row.get("repeat") or "").strip(), {})
                peers.setdefault((row.get("peer") or "").strip(), []).append(
                    {c: number(row.get(c)) for c in values})
    except (OSError, csv.Error, UnicodeDecodeError) as e:
        die("%s: cannot read: %s" % (metrics_path, e))
    return summary, metric, runs, systems, order


def mean(values):
    return sum(values) / len(values) if values else None


def curves(repeats, column):
    """Per evaluation index: x means (time, epoch), bytes and tokens of all peers, and the
    mean / min / max of `column` over peers and repeats."""
    length = max((len(rows) for peers in repeats.values() for rows in peers.values()), default=0)
    means = {"wall": "wall_seconds", "epoch": "epoch", "consensus": "consensus_distance"}
    sums = {"bytes": "bytes_sent", "tokens": "tokens"}
    points = []
    for i in range(length):
        seen = {key: [] for key in list(means) + list(sums)}
        ys = []
        for peers in repeats.values():
            total = {key: 0.0 for key in sums}  # None once a peer lacks the cell
            for rows in peers.values():
                r = rows[i] if i < len(rows) else {}
                for key, c in means.items():
                    if r.get(c) is not None:
                        seen[key].append(r[c])
                if r.get(column) is not None:
                    ys.append(r[column])
                for key, c in sums.items():
                    total[key] = None if total[key] is None or r.get(c) is None else total[key] + r[c]
            for key, value in total.items():
                if value is not None:
                    seen[key].append(value)
        if ys:
            point = {key: mean(values) for key, values in seen.items()}
            point.update({"y": mean(ys), "lo": min(ys), "hi": max(ys)})
            points.append(point)
    return points


def style(index, system):
    # Ten colours; past ten variants the marker tells the ones of a colour apart.
    colour = plt.get_cmap("tab10")(index % 10)
    marker = "os^Dv"[(index // 10) % 5]
    return {"color": colour, "linestyle": "--" if system == REFERENCE else "-", "marker": marker, "markersize": 3.5,
            "linewidth": 1.8}


def y_limits(all_points, target, metric):
    """Accuracy: from a bit below the lowest final accuracy (and the target) to a bit above the
    best. Bits per byte: the whole range the curves span, with a margin."""
    finals = [pts[-1]["y"] for pts in all_points if pts]
    highs = [p["hi"] for pts in all_points for p in pts]
    if not finals:
        return (0.0, 1.0) if metric["higher_is_better"] else (0.0, 8.0)
    if not metric["higher_is_better"]:
        lo, hi = min(p["lo"] for pts in all_points for p in pts), max(highs)
        span = max(hi - lo, 0.02)
        return max(0.0, lo - 0.05 * span), hi + 0.05 * span
    lo = min(finals + ([target] if target else []))
    hi = max(highs + ([target] if target else []))
    span = max(hi - lo, 0.02)
    return max(0.0, lo - max(0.03, 0.5 * span)), min(1.0, hi + max(0.01, 0.15 * span))


def place_legend(ax, count):
    """Inside where it hides least for a few lines; below the axes, in columns, for many."""
    if count <= 6:
        ax.legend(loc="best", framealpha=0.9)
        return
    longest = max(len(label) for label in ax.get_legend_handles_labels()[1])
    columns = 3 if longest <= 28 else 2 if longest <= 45 else 1
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=columns, frameon=False)


def bytes_label(v, _pos=None):
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if v >= scale:
            return "%g %s" % (float("%.3g" % (v / scale)), unit)
    return "%g B" % v


def metric_plot(folder, file_name, title, xlabel, key, variants, data, systems, colour_index, metric, target, ylim,
                log_x=False, left_out=()):
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT), dpi=DPI)
    drawn = 0
    for name in variants:
        pts = [p for p in data.get(name, []) if p[key] is not None and (not log_x or p[key] > 0)]
        if not pts:
            continue
        xs = [p[key] for p in pts]
        st = style(colour_index[name], systems.get(name, ""))
        label = name + (" (%s)" % REFERENCE if systems.get(name) == REFERENCE and REFERENCE not in name else "")
        ax.plot(xs, [p["y"] for p in pts], label=label, **st)
        ax.fill_between(xs, [p["lo"] for p in pts], [p["hi"] for p in pts], color=st["color"], alpha=0.15,
                        linewidth=0)
        drawn += 1
    if target:
        ax.axhline(target, color="0.35", linestyle=(0, (5, 4)), linewidth=1.2, label="target %.3g" % target)
        ax.annotate("target %.3g" % target, xy=(0.0, target), xycoords=("axes fraction", "data"),
                    xytext=(4, 3), textcoords="offset points", color="0.3", fontsize=9)
    if log_x:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(bytes_label))
    else:
        ax.set_xlim(left=0)
        if key == "tokens":  # whole tokens with separators, not an offset of 1e6
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: "{:,.0f}".format(v)))
    ax.set_ylim(*ylim)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(metric["label"])
    full_title = title
    if left_out:
        note = "(not shown, no bytes sent: %s)" % ", ".join(left_out)
        full_title += "\n" + textwrap.fill(note, 100, break_on_hyphens=False)
    ax.set_title(full_title)
    ax.grid(True, which="major", alpha=0.3)
    if log_x:
        ax.grid(True, which="minor", alpha=0.1)
    if drawn == 0:
        ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", fontsize=14, color="0.4")
    else:
        place_legend(ax, drawn + (1 if target else 0))
    fig.tight_layout()
    path = os.path.join(folder, file_name)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def consensus_plot(folder, experiment, variants, data, systems, colour_index):
    """None when no variant measured a consensus distance."""
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT), dpi=DPI)
    drawn = 0
    for name in variants:
        pts = [p for p in data.get(name, []) if p["epoch"] is not None and p["consensus"]]
        if not pts:
            continue
        ax.plot([p["epoch"] for p in pts], [p["consensus"] for p in pts], label=name,
                **style(colour_index[name], systems.get(name, "")))
        drawn += 1
    if drawn == 0:
        plt.close(fig)
        return None
    ax.set_yscale("log")
    ax.set_xlim(left=0)
    ax.set_xlabel("epoch")
    ax.set_ylabel("consensus distance (relative, log scale)")
    ax.set_title("%s: how far an exchange moves a peer's model" % experiment)
    ax.grid(True, which="major", alpha=0.3)
    place_legend(ax, drawn)
    fig.tight_layout()
    path = os.path.join(folder, "consensus_distance.png")
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def throughput_plot(folder, experiment, variants, summaries, systems, metric):
    names = list(variants)
    rates = [json_number(summaries.get(n, {}).get(metric["rate"])) for n in names]
    height = max(3.0, 1.2 + 0.45 * len(names))
    fig, ax = plt.subplots(figsize=(WIDTH, height), dpi=DPI)
    ys = list(range(len(names)))
    colours = [REFERENCE_COLOUR if systems.get(n) == REFERENCE else STARLING_COLOUR for n in names]
    ax.barh(ys, [r or 0.0 for r in rates], color=colours, height=0.65)
    top = max([r for r in rates if r] + [1.0])
    for y, r in zip(ys, rates):
        text = "n/a" if r is None else "{:,.0f}".format(r)
        ax.text((r or 0.0) + top * 0.01, y, text, va="center", ha="left", fontsize=10)
    ax.set_yticks(ys)
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.35)  # room for the values and the legend
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: "{:,.0f}".format(v)))
    ax.set_xlabel("training throughput, all peers (%s)" % metric["rate_unit"])
    ax.set_title("%s: throughput" % experiment)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    present = set(systems.get(n) == REFERENCE for n in names)
    handles = []
    if False in present:
        handles.append(Patch(color=STARLING_COLOUR, label="starling"))
    if True in present:
        handles.append(Patch(color=REFERENCE_COLOUR, label=REFERENCE))
    if len(handles) > 1:
        ax.legend(handles=handles, loc="lower right", framealpha=0.9)
    fig.tight_layout()
    path = os.path.join(folder, "throughput.png")
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def label_panels(variants, summaries):
    """[(variant names, partition, [[count per class] per peer])], one per distinct distribution."""
    panels = []
    for name in variants:
        entries = summaries.get(name, {}).get("label_counts")
        if not isinstance(entries, list) or not entries:
            continue
        counts = [[c if isinstance(c, int) else 0 for c in e.get("counts", [])] for e in entries if isinstance(e, dict)]
        partition = str(summaries[name].get("partition") or "")
        for panel in panels:
            if panel[2] == counts and panel[1] == partition:
                panel[0].append(name)
                break
        else:
            panels.append(([name], partition, counts))
    return panels


def label_plot(folder, experiment, variants, summaries):
    panels = label_panels(variants, summaries)
    if not panels:
        return None
    classes = max(len(c) for _, _, counts in panels for c in counts)
    colours = plt.get_cmap("tab10" if classes <= 10 else "tab20")
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH, 1.0 + 2.6 * len(panels)), dpi=DPI, squeeze=False)
    for ax, (names, partition, counts) in zip(axes[:, 0], panels):
        peers = list(range(len(counts)))
        bottom = [0] * len(counts)
        for c in range(classes):
            heights = [row[c] if c < len(row) else 0 for row in counts]
            ax.bar(peers, heights, bottom=bottom, color=colours(c % colours.N), width=0.7, label=str(c))
            bottom = [b + h for b, h in zip(bottom, heights)]
        ax.set_xticks(peers)
        ax.set_xticklabels(["peer %d" % p for p in peers])
        ax.set_ylabel("training samples")
        title = ", ".join(names) + (" (%s)" % partition if partition else "")
        ax.set_title("\n".join(textwrap.wrap(title, 90)), fontsize=11)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    axes[0, 0].legend(title="class", loc="upper left", bbox_to_anchor=(1.01, 1.0), framealpha=0.9)
    fig.suptitle("%s: the peers' training samples per class" % experiment)
    fig.tight_layout()
    path = os.path.join(folder, "label_distribution.png")
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    folder = sys.argv[1]
    if not os.path.isdir(folder):
        die("%s: no such folder" % folder)
    summary, metric, runs, systems, csv_order = read_inputs(folder)
    experiment = str(summary.get("experiment") or os.path.basename(os.path.normpath(folder)))
    # The target is accuracy's; a text experiment has none to draw.
    target = (json_number(summary.get("target_accuracy")) or 0.0) if metric is ACCURACY else 0.0
    summaries = {}
    for v in summary.get("variants", []):
        if isinstance(v, dict) and v.get("name") is not None:
            summaries[str(v["name"])] = v
            if v.get("system"):
                systems.setdefault(str(v["name"]), str(v["system"]))
    variants = list(summaries) + [v for v in csv_order if v not in summaries]
    data = {name: curves(runs.get(name, {}), metric["column"]) for name in variants}
    ylim = y_limits([data[n] for n in variants], target, metric)
    colour_index = {name: i for i, name in enumerate(variants)}  # the same colour in every figure
    what = metric["label"].split(" (")[0]

    written = [metric_plot(folder, "%s_vs_%s.png" % (metric["prefix"], suffix), "%s: %s %s" % (experiment, what, title),
                           xlabel, key, variants, data, systems, colour_index, metric, target, ylim)
               for suffix, key, xlabel, title in metric["axes"]]
    silent = [n for n in variants if data[n] and not any(p["bytes"] for p in data[n])]
    silent += [n for n in variants if not data[n] and n in summaries
               and json_number(summaries[n].get("bytes_sent")) == 0]
    with_bytes = [n for n in variants if n not in silent]
    written.append(metric_plot(folder, "%s_vs_bytes.png" % metric["prefix"], "%s: %s against traffic" % (experiment, what),
                               "bytes sent by all peers (log scale)", "bytes", with_bytes, data, systems,
                               colour_index, metric, target, ylim, log_x=True, left_out=silent))
    written.append(throughput_plot(folder, experiment, variants, summaries, systems, metric))
    for optional in (consensus_plot(folder, experiment, variants, data, systems, colour_index),
                     label_plot(folder, experiment, variants, summaries)):
        if optional:
            written.append(optional)
    with open(os.path.join(folder, MANIFEST), "w") as f:
        f.writelines(os.path.basename(path) + "\n" for path in written)
    for path in written:
        print(path)

if __name__ == "__main__":
    main()
