#!/usr/bin/env bash
# Non-IID partitions through the executable: every bad partition exits 2 before anything
# trains (also one only the labels rule out), `starling partition` exports disjoint parts
# that cover the set, and a launched job's peers train on exactly those parts (their
# summaries' label_counts).
set -euo pipefail
starling=$1
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind

source "$(dirname "$0")/peers_config.sh"
source "$(dirname "$0")/expect_exit.sh"  # its output goes to $tmp/out: results go to $tmp/results

peers_config "$tmp/job.toml" allreduce $base $((base + 1)) $((base + 2))
sed -i "s|^out_dir = .*|out_dir = \"$tmp/results\"|" "$tmp/job.toml"
for cmd in launch partition; do
  expect_exit 2 "--set data.partition" $cmd --config "$tmp/job.toml" --set data.partition=non-iid
  expect_exit 2 "--set data.alpha: data.alpha: expected a number in (0, inf)" $cmd --config "$tmp/job.toml" --set data.alpha=0
  expect_exit 2 "data.alpha: expected a number in (0, inf)" $cmd --config "$tmp/job.toml" --set data.alpha=nan
  expect_exit 2 "data.classes_per_peer" $cmd --config "$tmp/job.toml" --set data.classes_per_peer=0
  # What needs the labels: more classes per peer than the 10 classes, too few shards for them.
  expect_exit 2 "data.classes_per_peer: expected classes_per_peer in \[1, 10\]" $cmd --config "$tmp/job.toml" \
    --set data.partition=shards --set data.classes_per_peer=11
  expect_exit 2 "expected classes_per_peer of at least 4" $cmd --config "$tmp/job.toml" --set data.partition=shards
done
[ ! -e "$tmp/results" ] || fail "a bad partition wrote outputs"

# Twelve peers, ten classes each on one peer (alpha tiny): some peer gets nothing. In the
# file, so the error names its line; each peer refuses it too, before training.
peers_config "$tmp/many.toml" allreduce $(seq $((base + 10)) $((base + 21)))
sed -i "s|^out_dir = .*|out_dir = \"$tmp/results\"|" "$tmp/many.toml"
sed -i 's/^synthetic_test = 300$/synthetic_test = 300\npartition = "dirichlet"\nalpha = 1e-9/' "$tmp/many.toml"
line=$(grep -n '^alpha' "$tmp/many.toml" | cut -d: -f1)
expect_exit 2 "many.toml:$line: data.alpha: the \"dirichlet\" partition over 12 peers leaves peer" launch --config "$tmp/many.toml"
expect_exit 2 "many.toml:$line: data.alpha" peer --config "$tmp/many.toml" --id 0
[ ! -e "$tmp/results" ] || fail "a partition that starves a peer wrote outputs"

# The export: disjoint, covering, as many parts as peers; then a run trains on those parts.
"$starling" partition --config "$tmp/job.toml" --set data.partition=dirichlet --set data.alpha=0.3 --out "$tmp/p.json"
timeout 120 "$starling" launch --config "$tmp/job.toml" --set data.partition=dirichlet --set data.alpha=0.3 \
  --set run.epochs=0.5 >"$tmp/launch.log" 2>&1 || { cat "$tmp/launch.log"; fail "launch with a dirichlet partition failed"; }
/usr/bin/python3 - "$tmp/p.json" "$tmp/results" <<'PY' || fail "partition export or label_counts wrong"
import json, sys
part = json.load(open(sys.argv[1]))
peers = part["peers"]
assert part["partition"] == "dirichlet" and len(peers) == 3, part["partition"]
seen = sorted(i for p in peers for i in p["indices"])
assert seen == list(range(part["train_samples"])), "parts overlap or miss samples"
for p in peers:
    summary = json.load(open("%s/e2e-peer%d.summary.json" % (sys.argv[2], p["id"])))
    assert summary["partition"] == "dirichlet"
    assert summary["label_counts"] == p["label_counts"], (summary["label_counts"], p["label_counts"])
    assert sum(p["label_counts"]) == len(p["indices"])
assert max(max(p["label_counts"]) / max(1, sum(p["label_counts"])) for p in peers) > 0.2  # not uniform
PY
echo "partition end-to-end: ok"
