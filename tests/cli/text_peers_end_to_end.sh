#!/usr/bin/env bash
# A language model across peers through the executable: `starling launch` trains a tiny GPT
# on four peers in one process by every-step all-reduce (every peer the same bits, val_bpb
# in each summary and the mean and worst in the job's; again with two SMA learners a peer), by
# a gradient all-reduce (DDP's step: the same bits, another model), as processes by DiLoCo on
# 4-bit pseudo-gradients over the by-file split (the same bits again, and fewer bytes than fp32
# DiLoCo), in one process by 4-bit DiLoCo with checkpoints cut back to step 8 and resumed (the
# uninterrupted job's bits), and by NoLoCo's gossip with one random partner (the peers' models
# differ), and by that DiLoCo with the exchange beside the steps (landing at the next exchange
# point, checkpointed and resumed between them: the uninterrupted job's bits; and landing one
# step after its point); the metrics CSV carries val_bpb and
# bytes; a gradient all-reduce beside the steps exits 2 naming the key. Every trained job's
# val_bpb must end at least a bit per byte below the models as drawn (measured here first).
set -euo pipefail
starling=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_exit.sh"
source "$(dirname "$0")/peers_config.sh"  # tiny_gpt_job

base=$((7400 + RANDOM % 400))
tiny_gpt_job "$tmp/job.toml" 12 $base $((base + 1)) $((base + 2)) $((base + 3))

field() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
UNTRAINED=$(untrained_bpb "$tmp/job.toml")  # read by the checks below as the bits to fall from
export UNTRAINED
learnt() {  # learnt SUMMARY: its worst peer's val_bpb is a bit per byte below the untrained models'
  /usr/bin/python3 -c 'import json, os, sys; j = json.load(open(sys.argv[1])); u = float(os.environ["UNTRAINED"]);
assert 7.0 < u < 9.0, u
assert j["val_bpb_max"] < u - 0.5, (j["val_bpb"], j["val_bpb_max"], u)' "$1" || fail "$1: no learning (untrained: $UNTRAINED bpb)"
}

"$starling" launch --config "$tmp/job.toml" --in-process --summary "$tmp/allreduce.json" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "every-step all-reduce on text failed"; }
[ "$(field "$tmp/allreduce.json" identical_models)" = True ] || fail "all-reduce peers differ"
/usr/bin/python3 - "$tmp/allreduce.json" "$tmp/results/tiny-peer2.metrics.csv" <<'PY' || fail "text job summary or CSV wrong"
import csv, json, sys
job = json.load(open(sys.argv[1]))
assert job["val_bpb"] <= job["val_bpb_max"], job
peers = [json.load(open(p)) for p in job["peer_summaries"]]
assert len(peers) == 4 and all(p["mode"] == "allreduce" and p["val_bpb"] == job["val_bpb"] for p in peers)
rows = list(csv.DictReader(open(sys.argv[2])))
assert rows[-1]["step"] == "12" and float(rows[-1]["val_bpb"]) > 0 and int(rows[-1]["bytes_sent"]) > 0, rows
PY
learnt "$tmp/allreduce.json"

# Two SMA learner actors a peer, on twice the steps (as many iterations): all-reduce mixes the
# peers' central models, which end the same bits.
"$starling" launch --config "$tmp/job.toml" --in-process --set node.learners=2 --set run.steps=24 --summary "$tmp/learners.json" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "all-reduce of two-learner peers on text failed"; }
[ "$(field "$tmp/learners.json" identical_models)" = True ] || fail "two-learner all-reduce peers differ"
learnt "$tmp/learners.json"
[ "$(field "$tmp/results/tiny-peer1.summary.json" learners_per_peer)" = 2 ] || fail "a peer does not report its two learners"

# DDP's step: the gradients averaged before one common AdamW step; the same bits everywhere,
# and another model than averaging the models after each peer's own step.
"$starling" launch --config "$tmp/job.toml" --in-process --set exchange.average='"gradients"' \
  --summary "$tmp/gradients.json" 2>"$tmp/log" || { cat "$tmp/log"; fail "gradient all-reduce on text failed"; }
/usr/bin/python3 - "$tmp/allreduce.json" "$tmp/gradients.json" <<'PY' || fail "gradient all-reduce: peers differ or it averaged models"
import json, sys
models, grads = (json.load(open(p)) for p in sys.argv[1:3])
assert grads["identical_models"], grads
assert grads["val_bpb"] != models["val_bpb"], (grads["val_bpb"], models["val_bpb"])
PY
learnt "$tmp/gradients.json"
expect_exit 2 "exchange.period: expected 1 with exchange.average = \"gradients\"" launch --config "$tmp/job.toml" \
  --set exchange.average='"gradients"' --set exchange.period=2

diloco=(--set exchange.mode='"local-sgd"' --set exchange.period=4 --set exchange.outer_lr=0.7 --set exchange.outer_momentum=0.9
        --set data.partition='"by-file"')
"$starling" launch --config "$tmp/job.toml" "${diloco[@]}" --summary "$tmp/fp32.json" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "DiLoCo on text failed"; }
"$starling" launch --config "$tmp/job.toml" "${diloco[@]}" --set compression.codec='"qsgd"' --set compression.bits=4 \
  --summary "$tmp/4bit.json" 2>"$tmp/log" || { cat "$tmp/log"; fail "DiLoCo with 4-bit pseudo-gradients failed"; }
/usr/bin/python3 - "$tmp/fp32.json" "$tmp/4bit.json" <<'PY' || fail "DiLoCo's peers differ or 4-bit saves too little"
import json, sys
fp32, q4 = (json.load(open(p)) for p in sys.argv[1:3])
assert fp32["identical_models"] and q4["identical_models"], (fp32, q4)
assert fp32["bytes_sent"] > 3 * q4["bytes_sent"], (fp32["bytes_sent"], q4["bytes_sent"])
PY
learnt "$tmp/fp32.json"
learnt "$tmp/4bit.json"

"$starling" launch --config "$tmp/job.toml" --in-process --set exchange.mode='"gossip"' --set exchange.period=4 \
  --set exchange.outer_lr=0.7 --set exchange.outer_momentum=0.5 --summary "$tmp/noloco.json" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "NoLoCo on text failed"; }
[ "$(field "$tmp/noloco.json" identical_models)" = False ] || fail "NoLoCo's peers ended with one model"
learnt "$tmp/noloco.json"

# Checkpoints across peers: DiLoCo on 4-bit pseudo-gradients (x₀, the outer momentum, the
# error feedback and where QSGD's rounding stands ride in section "exchange"; without them the
# resumed job ends elsewhere) checkpointing every 4 steps, cut back to step 8 on every peer and
# resumed by `launch --resume`: the same bits as the uninterrupted job.
ck=("${diloco[@]}" --set compression.codec='"qsgd"' --set compression.bits=4
    --set run.checkpoint_dir=tck --set run.checkpoint_every=4 --set run.checkpoint_keep=10)
"$starling" launch --config "$tmp/job.toml" --in-process "${ck[@]}" --summary "$tmp/c1.json" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "DiLoCo with checkpoints on text failed"; }
checksums() { /usr/bin/python3 -c 'import json,sys; print(*(json.load(open(p))["model_checksum"] for p in json.load(open(sys.argv[1]))["peer_summaries"]))' "$1"; }
whole=$(checksums "$tmp/c1.json")  # the resumed job writes its peers' summaries over these
for peer in 0 1 2 3; do
  [ -e "$tmp/tck/peer$peer/ckpt-000000008.starling" ] || fail "peer $peer has no checkpoint at step 8"
  find "$tmp/tck/peer$peer" -name 'ckpt-*' ! -name 'ckpt-000000008.starling' -delete
done
"$starling" launch --config "$tmp/job.toml" --in-process "${ck[@]}" --resume --summary "$tmp/c2.json" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "resumed DiLoCo peers on text failed"; }
[ "$(checksums "$tmp/c2.json")" = "$whole" ] || fail "resumed DiLoCo peers end with other bits than the uninterrupted job"
/usr/bin/python3 - "$tmp/c1.json" "$tmp/c2.json" <<'PY' || fail "the resumed DiLoCo job differs from the uninterrupted one"
import json, sys
whole, resumed = (json.load(open(p)) for p in sys.argv[1:3])
assert resumed["identical_models"] and resumed["val_bpb"] == whole["val_bpb"], (whole["val_bpb"], resumed["val_bpb"])
assert all(json.load(open(p))["resumed_from_step"] == 8 for p in resumed["peer_summaries"]), "not every peer resumed at 8"
PY

# The same DiLoCo job with the exchange beside the steps (exchange.overlap): each outer step
# arrives a period late on top of the inner steps taken meanwhile, so the models end
# elsewhere, but the last exchange is strict (every peer the same bits); a checkpoint at
# step 6, between exchange points, settles the mix in flight first, and the job cut back to
# it and resumed ends with the uninterrupted job's bits.
ov=("${ck[@]}" --set run.checkpoint_dir=tov --set run.checkpoint_every=6 --set exchange.overlap=true)
"$starling" launch --config "$tmp/job.toml" --in-process "${ov[@]}" --summary "$tmp/o1.json" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "overlapped DiLoCo on text failed"; }
whole=$(checksums "$tmp/o1.json")
for peer in 0 1 2 3; do find "$tmp/tov/peer$peer" -name 'ckpt-*' ! -name 'ckpt-000000006.starling' -delete; done
"$starling" launch --config "$tmp/job.toml" --in-process "${ov[@]}" --resume --summary "$tmp/o2.json" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "resumed overlapped DiLoCo peers on text failed"; }
[ "$(checksums "$tmp/o2.json")" = "$whole" ] || fail "resumed overlapped DiLoCo peers end with other bits than the uninterrupted job"
/usr/bin/python3 - "$tmp/c1.json" "$tmp/o1.json" <<'PY' || fail "overlapped DiLoCo: peers differ, or it did not overlap"
import json, sys
strict, overlapped = (json.load(open(p)) for p in sys.argv[1:3])
assert overlapped["identical_models"], overlapped
assert overlapped["val_bpb"] != strict["val_bpb"], "the outer steps did not arrive late"
peers = [json.load(open(p)) for p in overlapped["peer_summaries"]]
assert all(p["overlapped_seconds"] > 0 for p in peers), [p.get("overlapped_seconds") for p in peers]
PY
learnt "$tmp/o1.json"
# Landing one step after its exchange point (Streaming DiLoCo's τ = 1): another path again,
# every peer the same bits.
"$starling" launch --config "$tmp/job.toml" --in-process "${diloco[@]}" --set exchange.overlap=true \
  --set exchange.overlap_steps=1 --summary "$tmp/tau1.json" 2>"$tmp/log" || { cat "$tmp/log"; fail "DiLoCo landing after 1 step failed"; }
/usr/bin/python3 - "$tmp/fp32.json" "$tmp/tau1.json" <<'PY' || fail "DiLoCo landing after one step: peers differ, or it did not overlap"
import json, sys
strict, tau1 = (json.load(open(p)) for p in sys.argv[1:3])
assert tau1["identical_models"] and tau1["val_bpb"] != strict["val_bpb"], (strict, tau1)
PY
learnt "$tmp/tau1.json"
expect_exit 2 "exchange.overlap: expected false with exchange.average = \"gradients\"" launch --config "$tmp/job.toml" \
  --set exchange.average='"gradients"' --set exchange.overlap=true
echo "text peers end-to-end: ok"
