#!/usr/bin/env bash
# `starling experiment` end to end on synthetic data: four variants (three launches of two
# peers on loopback, one on a Dirichlet partition, and one single node) produce metrics.csv,
# summary.json, report.md and the plots (the peers' label distributions among them); a tiny
# GPT's experiment has its table and plots in bits per byte; bad experiment configs exit 2
# naming the file, line and key before anything runs.
set -euo pipefail
starling=$1
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind

source "$(dirname "$0")/peers_config.sh"
peers_config "$tmp/base.toml" allreduce $base $((base + 1))

cat >"$tmp/experiment.toml" <<TOML
[experiment]
name = "e2e"
base = "base.toml"
target_accuracy = 0.5
epochs = 2
set = { "run.eval_every" = 0.5 }

[[variant]]
name = "allreduce"

[[variant]]
name = "gossip"
set = { exchange = { mode = "gossip", topology = "ring" } }

[[variant]]
name = "alone"
set = { "exchange.mode" = "none", "node.learners" = 2 }

[[variant]]
name = "dirichlet"
set = { "data.partition" = "dirichlet", "data.alpha" = 0.5 }
TOML

timeout 240 "$starling" experiment --config "$tmp/experiment.toml" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr" \
  || { cat "$tmp/stderr"; fail "experiment failed"; }
for f in metrics.csv summary.json report.md runs/allreduce/log.txt runs/gossip/log.txt runs/alone/log.txt; do
  [ -s "$tmp/out/$f" ] || fail "missing $f"
done
grep -q '^| variant | system |' "$tmp/stdout" || fail "no table on stdout"
for v in allreduce gossip alone dirichlet; do
  grep -q "^| $v | starling |" "$tmp/out/report.md" || fail "report.md has no row for $v"
  [ "$(grep -c "^$v,0,starling," "$tmp/out/metrics.csv")" -ge 4 ] || fail "metrics.csv has too few rows for $v"
done
grep -q '^gossip,0,starling,1,' "$tmp/out/metrics.csv" || fail "metrics.csv lacks peer 1 of gossip"
/usr/bin/python3 - "$tmp/out/summary.json" <<'PY' || fail "summary.json is not what it should be"
import json, sys
s = json.load(open(sys.argv[1]))
names = [v["name"] for v in s["variants"]]
assert names == ["allreduce", "gossip", "alone", "dirichlet"], names
for v in s["variants"]:
    assert v["status"] == "ok" and v["test_accuracy"] > 0.5 and v["time_to_target_seconds"] is not None, v
assert s["variants"][0]["identical_models"] is True and s["variants"][0]["bytes_sent"] > 0
assert s["variants"][0]["speedup_over_baseline"] == 1
assert s["variants"][2]["bytes_sent"] == 0 and s["variants"][2]["learners_per_peer"] == 2
# Every peer's samples per class: two peers (one for the single node), covering the 1200.
for v, peers in zip(s["variants"], [2, 2, 1, 2]):
    counts = [p["counts"] for p in v["label_counts"]]
    assert len(counts) == peers and all(len(c) == 10 for c in counts), v["label_counts"]
assert [v["partition"] for v in s["variants"]] == ["iid", "iid", "iid", "dirichlet"]
assert sum(map(sum, (p["counts"] for p in s["variants"][3]["label_counts"]))) == 1200
assert "dirichlet" in s["variants"][3]["setup"], s["variants"][3]["setup"]
PY
for p in accuracy_vs_time accuracy_vs_epoch accuracy_vs_bytes throughput consensus_distance label_distribution; do
  [ -s "$tmp/out/$p.png" ] || fail "missing plot $p.png"
  grep -q "($p.png)" "$tmp/out/report.md" || fail "report.md does not link $p.png"
done

# A language model's experiment: the table in bits per byte, and the bpb plots in place of
# the accuracy plots, each linked from report.md.
mkdir "$tmp/lm"
tiny_gpt_job "$tmp/lm/base.toml" 8 $((base + 2)) $((base + 3))
cat >"$tmp/lm/experiment.toml" <<TOML
[experiment]
name = "lm"
base = "base.toml"
set = { "launch.in_process" = true }

[[variant]]
name = "allreduce"

[[variant]]
name = "diloco"
set = { "exchange.mode" = "local-sgd", "exchange.period" = 4, "exchange.outer_lr" = 0.7, "exchange.outer_momentum" = 0.9 }
TOML
timeout 240 "$starling" experiment --config "$tmp/lm/experiment.toml" --out "$tmp/lm/out" >"$tmp/lm/stdout" 2>"$tmp/lm/stderr" \
  || { cat "$tmp/lm/stderr"; fail "text experiment failed"; }
grep -q '^| diloco | local-sgd' "$tmp/lm/out/report.md" || fail "report.md has no bpb row for diloco"
for p in bpb_vs_tokens bpb_vs_time bpb_vs_bytes throughput; do
  [ -s "$tmp/lm/out/$p.png" ] || { cat "$tmp/lm/out/plot.log"; fail "missing plot $p.png of a text experiment"; }
  grep -q "($p.png)" "$tmp/lm/out/report.md" || fail "report.md does not link $p.png"
done
! grep -q "accuracy_vs" "$tmp/lm/out/report.md" || fail "a text experiment's report links accuracy plots"
/usr/bin/python3 - "$tmp/lm/out/summary.json" <<'PY' || fail "the text experiment's summary.json lacks tokens/s"
import json, sys
for v in json.load(open(sys.argv[1]))["variants"]:
    assert v["tokens_per_second"] > 0 and v["tokens"] == 2 * 8 * 2 * 16 and v["val_bpb"] > 0, v
PY

# Bad experiment configs: exit 2 with file, line and key, and no run started.
bad() {  # bad NAME EXPECTED-TEXT  (the config on stdin)
  cat >"$tmp/$1.toml"
  set +e
  "$starling" experiment --config "$tmp/$1.toml" --out "$tmp/bad-$1" 2>"$tmp/$1.err"
  local code=$?
  set -e
  [ $code -eq 2 ] || fail "$1: exit $code, expected 2"
  grep -q "$2" "$tmp/$1.err" || { cat "$tmp/$1.err"; fail "$1: message lacks '$2'"; }
  [ ! -d "$tmp/bad-$1/runs" ] || fail "$1: a run started"
}
printf '[experiment]\nbase = "base.toml"\nepoch = 2\n[[variant]]\nname = "a"\n' | bad unknown_key "unknown_key.toml:3: experiment.epoch"
printf '[experiment]\nbase = "base.toml"\n[[variant]]\nname = "a"\nset = { "optimizer.lr" = -1 }\n' | bad bad_override "variant 'a'"
printf '[experiment]\nbase = "base.toml"\n[[variant]]\nname = "a"\nsystem = "horovod"\n' | bad bad_system "variant.system"
printf '[experiment]\nbase = "base.toml"\n[[variant]]\nname = "a"\n[[variant]]\nname = "a"\n' | bad duplicate "appears twice"
printf '[experiment]\nbase = "base.toml"\nbaseline = "b"\n[[variant]]\nname = "a"\n' | bad baseline "experiment.baseline"
printf '[experiment]\nbase = "nowhere.toml"\n[[variant]]\nname = "a"\n' | bad missing_base "cannot read"
printf '[experiment]\nbase = "base.toml"\n[[variant]]\nname = "a"\nnetwork = "wifi"\n' | bad network "variant.network"
printf '[experiment]\nbase = "base.toml"\n[[variant]]\nname = "a"\nnetwork = "netns:10mbit"\nset = { "launch.in_process" = true }\n' \
  | bad netns_in_process "netns_in_process.toml:3: variant.network: .*launch.in_process"
# Only the labels rule this one out: 2 peers x 2 single-class shards cannot cover 10 classes.
printf '[experiment]\nbase = "base.toml"\n[[variant]]\nname = "a"\nset = { "data.partition" = "shards" }\n' \
  | bad partition "variant 'a' (run.seed 1): .*data.classes_per_peer: 4 single-class shards"
echo "experiment end to end: ok"
