#!/usr/bin/env bash
# A language model's checkpoints and samples through the executable: `starling train` with
# run.checkpoint_dir writes checkpoints a resumed run continues from to the same model bits,
# with one learner and with two SMA learner actors (a checkpoint of another learner count exits 2);
# `starling generate` samples from the newest (or a named) checkpoint, the same bytes for the
# same seed; a checkpoint of another model, or none to read, exits 2 naming the key.
set -euo pipefail
starling=$1
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
checkpoint_dir = "$tmp/ckpt"
checkpoint_every = 3
steps = 6
eval_steps = 3
$(tiny_gpt 4)
TOML
checksum() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["model_checksum"])' "$1"; }

# Interrupted after step 3: the resumed run ends with the uninterrupted run's bits.
resumes_exactly() {  # DIR [--set KEY=VALUE ...]
  local dir=$1; shift
  "$starling" train --config "$tmp/gpt.toml" --set "run.checkpoint_dir=$dir" "$@" 2>"$tmp/log" || { cat "$tmp/log"; fail "training with checkpoints failed: $*"; }
  [ -f "$dir/ckpt-000000003.starling" ] && [ -f "$dir/ckpt-000000006.starling" ] || { ls "$dir"; fail "no checkpoints at steps 3 and 6: $*"; }
  local whole; whole=$(checksum "$tmp/results/tiny.summary.json")
  rm "$dir/ckpt-000000006.starling"
  "$starling" train --config "$tmp/gpt.toml" --set "run.checkpoint_dir=$dir" "$@" --resume 2>"$tmp/log" || { cat "$tmp/log"; fail "resuming failed: $*"; }
  grep -q "resuming from checkpoint .* at step 3" "$tmp/log" || { cat "$tmp/log"; fail "the run did not resume from step 3: $*"; }
  [ "$(checksum "$tmp/results/tiny.summary.json")" = "$whole" ] || fail "the resumed model differs from the uninterrupted one: $*"
  [ "$(cut -d, -f1 "$tmp/results/tiny.metrics.csv" | tr '\n' ' ')" = "step 3 6 " ] || fail "the resumed CSV's rows are not steps 3 and 6: $*"
}
resumes_exactly "$tmp/ckpt"
# Two SMA learners on twice the steps (6 iterations of two batches each), a round every
# second iteration (the checkpoint at iteration 3 falls between rounds) and a momentum on z:
# every replica, its moments, z and z_prev come back.
resumes_exactly "$tmp/ckpt2" --set node.learners=2 --set run.steps=12 --set run.eval_steps=6 --set node.sync_every=2 \
  --set node.momentum=0.5
expect_exit 2 "learners: 2 in the checkpoint, 1 here" train --config "$tmp/gpt.toml" --set "run.checkpoint_dir=$tmp/ckpt2" --resume

"$starling" generate --config "$tmp/gpt.toml" --prompt "Zm9v" --bytes 40 --seed 7 >"$tmp/a" 2>"$tmp/log" || { cat "$tmp/log"; fail "generate failed"; }
"$starling" generate --config "$tmp/gpt.toml" --prompt "Zm9v" --bytes 40 --seed 7 --checkpoint "$tmp/ckpt/ckpt-000000006.starling" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "the same seed and checkpoint gave different samples"
[ "$(head -c 4 "$tmp/a")" = "Zm9v" ] && [ "$(wc -c <"$tmp/a")" -eq 45 ] || { cat "$tmp/a"; fail "the sample is not the prompt and 40 bytes"; }
"$starling" generate --config "$tmp/gpt.toml" --bytes 40 --seed 8 >"$tmp/c"
! cmp -s "$tmp/a" "$tmp/c" || fail "another seed and prompt gave the same sample"
# Two learners' checkpoint: generate samples their central model.
"$starling" generate --config "$tmp/gpt.toml" --prompt "Zm9v" --bytes 40 --seed 7 --checkpoint "$tmp/ckpt2/ckpt-000000006.starling" >"$tmp/d"
[ "$(wc -c <"$tmp/d")" -eq 45 ] || { cat "$tmp/d"; fail "no sample from the two learners' central model"; }

expect_exit 2 "model: the checkpoint holds gpt" generate --config "$tmp/gpt.toml" --set model.width=32 --checkpoint "$tmp/ckpt/ckpt-000000006.starling"
expect_exit 2 "run.checkpoint_dir: not set" generate --config "$tmp/gpt.toml" --set run.checkpoint_dir= --set run.checkpoint_every=0
echo "text checkpoints and samples end-to-end: ok"
