#!/usr/bin/env bash
# A GPT trained from the config on text through the executable: `starling train` writes
# val_loss and val_bpb to the metrics CSV and the summary; `starling model` prints the GPT
# and `--json` exports its sizes; the shipped fortunes config is nanoGPT's 834,304
# parameters; heads that do not divide the width, a preset other than the GPT on text, the
# GPT on images, run.epochs on text and a context longer than a file exit 2 naming
# file:line:key before anything trains. Two SMA learner actors train, and so does an
# auto-tuned learner count: their central model's val_bpb drops.
set -euo pipefail
starling=$1
configs=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_exit.sh"
source "$(dirname "$0")/tiny_gpt.sh"

random_text "$tmp/text" 3000 alpha beta
cat >"$tmp/gpt.toml" <<TOML
[run]
name = "tiny"
data_dir = "$tmp/cache"
out_dir = "$tmp/results"
steps = 6
eval_steps = 3
$(tiny_gpt 4)
TOML

"$starling" train --config "$tmp/gpt.toml" 2>"$tmp/log" || { cat "$tmp/log"; fail "training a GPT on text failed"; }
grep -q "val_bpb" "$tmp/log" || fail "no val_bpb in the log"
/usr/bin/python3 - "$tmp/results/tiny.metrics.csv" "$tmp/results/tiny.summary.json" <<'PY' || fail "text metrics wrong"
import csv, json, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(r["step"]) for r in rows] == [3, 6], rows
for r in rows:
    assert abs(float(r["val_bpb"]) - float(r["val_loss"]) / math.log(2)) < 1e-5, r
    assert 4.0 < float(r["val_bpb"]) < 9.0, r  # near 8 bits untrained; base64 text has ~6
assert "test_accuracy" not in rows[0]
s = json.load(open(sys.argv[2]))
assert s["model"] == "gpt" and s["steps"] == 6 and s["tokens"] == 6 * 4 * 16, s
assert abs(s["val_bpb"] - float(rows[-1]["val_bpb"])) < 1e-5, s
PY

# Two SMA learner actors: 60 steps of one batch are 30 iterations of both learners' batches,
# and their central model's val_bpb drops from the untrained 8 bits to near base64's 6.
"$starling" train --config "$tmp/gpt.toml" --set node.learners=2 --set run.steps=60 --set run.eval_steps=20 \
  --set optimizer.lr=1e-2 2>"$tmp/log" || { cat "$tmp/log"; fail "training two learners failed"; }
/usr/bin/python3 - "$tmp/results/tiny.metrics.csv" "$tmp/results/tiny.summary.json" <<'PY' || fail "two learners' metrics wrong"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(r["step"]) for r in rows] == [10, 20, 30], rows
assert float(rows[-1]["val_bpb"]) < 6.6, rows  # untrained: 8
s = json.load(open(sys.argv[2]))
assert s["learners_per_peer"] == 2 and s["steps"] == 30 and s["tokens"] == 60 * 4 * 16, s
PY

# node.learners = "auto": the node times one learner, then two, and trains on with its choice.
"$starling" train --config "$tmp/gpt.toml" --set node.learners=auto --set run.steps=30000 --set run.eval_steps=0 \
  --set optimizer.lr=1e-2 2>"$tmp/log" || { cat "$tmp/log"; fail "auto-tuned learners on text failed"; }
grep -q "autotune: 1 learner give" "$tmp/log" || { cat "$tmp/log"; fail "no auto-tuning on text"; }
/usr/bin/python3 - "$tmp/results/tiny.summary.json" <<'PY' || fail "the auto-tuned text run's summary is wrong"
import json, sys
s = json.load(open(sys.argv[1]))
# An iteration is a batch of every learner: where the count changed mid-run, the last one
# may pass the 30,000 batches by fewer than a learner count of batches.
batches = s["tokens"] / (4 * 16)
assert s["learners_per_peer"] >= 1 and s["autotune_log"] and 30000 <= batches < 30000 + s["learners_per_peer"], s
assert s["val_bpb"] < 6.6, s
PY

"$starling" model --config "$tmp/gpt.toml" | grep -q "parameters" || fail "starling model prints no GPT"
"$starling" model --config "$tmp/gpt.toml" --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert (d["kind"], d["blocks"], d["heads"], d["width"], d["context"], d["vocab"]) == ("gpt", 1, 2, 16, 16, 256), d
' || fail "starling model --json exports the GPT wrong"
if [ -d /usr/share/games/fortunes ]; then
  "$starling" model --config "$configs/fortunes-gpt.toml" --set "run.data_dir=$tmp/cache" --json |
    /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["parameters"] == 834304, d' ||
    fail "fortunes-gpt is not nanoGPT's 834,304 parameters"
fi

sed 's/^heads = 2/heads = 3/' "$tmp/gpt.toml" >"$tmp/bad-heads.toml"
expect_exit 2 "bad-heads.toml:13: model.heads: expected a divisor of model.width (16), not 3" train --config "$tmp/bad-heads.toml"
expect_exit 2 "model.kind: expected model.kind = \"gpt\" with data.dataset = \"text\"" train --config "$tmp/gpt.toml" --set model.kind=mlp
expect_exit 2 "model.kind: expected a preset for images" train --config "$tmp/gpt.toml" --set data.dataset=synthetic
expect_exit 2 "run.epochs: expected run.steps in its place" train --config "$tmp/gpt.toml" --set run.epochs=2
expect_exit 2 "model.context: .*its training part" train --config "$tmp/gpt.toml" --set model.context=4000
expect_exit 2 "model.context: expected" train --config "$tmp/gpt.toml" --set model.context=0
echo "text training end-to-end: ok"
