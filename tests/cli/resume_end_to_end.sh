#!/usr/bin/env bash
# Checkpoints and --resume as a user meets them, on synthetic data: `starling train` killed
# with SIGKILL once a checkpoint exists and restarted with --resume continues from the newest
# one (says which and at what step, does not redo the steps before it) and ends with the same
# model as an uninterrupted run; a corrupted newest checkpoint is skipped for the previous
# one; another model's checkpoint is refused with exit 2; --resume with nothing to resume
# from starts afresh. Then `starling launch --resume` continues every peer of an all-reduce
# job from its checkpoint to the same models as an uninterrupted job, and an overlapped
# local-SGD job from a checkpoint between exchange points; gradient tracking, the outer
# optimizer, the compressed all-reduce and CHOCO gossip take up their exchange state from the
# checkpoint.
set -euo pipefail
starling=$1
src=$2
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
field() { grep "\"$2\":" "$1" | head -1 | sed 's/.*": *//; s/[",]//g'; }

# 20 epochs of 187 steps (synthetic_train 6000, batch 32): long enough to be caught mid-run.
run=(train --config "$src/configs/fmnist-mlp.toml" --set data.dataset=synthetic --set run.epochs=20
     --set run.eval_every=5 --set run.out_dir="$tmp/out" --set run.name=r --set run.checkpoint_dir="$tmp/ckpt"
     --set run.checkpoint_every=400 --set node.threads=1)
total=3750

timeout 120 "$starling" "${run[@]}" --set run.checkpoint_every=0 --summary "$tmp/straight.json" >"$tmp/straight.log" 2>&1 \
  || { cat "$tmp/straight.log"; fail "uninterrupted run failed"; }
straight=$(field "$tmp/straight.json" model_checksum)

# Killed at the first instant a checkpoint is on disk.
"$starling" "${run[@]}" --summary "$tmp/killed.json" >"$tmp/killed.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do
  ls "$tmp/ckpt"/ckpt-*.starling >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
kill -9 "$pid" 2>/dev/null || { cat "$tmp/killed.log"; fail "the run ended before it could be killed"; }
wait "$pid" 2>/dev/null || true
pid=
[ ! -e "$tmp/killed.json" ] || fail "a killed run wrote its summary"
newest=$(ls "$tmp/ckpt" | grep '^ckpt-.*\.starling$' | sort | tail -1)
[ -n "$newest" ] || fail "no checkpoint before the kill"
step=$((10#$(echo "$newest" | tr -dc '0-9')))
[ "$step" -lt "$total" ] || fail "killed only at the end (step $step)"

timeout 120 "$starling" "${run[@]}" --resume --summary "$tmp/resumed.json" >"$tmp/resumed.log" 2>&1 \
  || { cat "$tmp/resumed.log"; fail "resumed run failed"; }
grep -q "resuming from checkpoint .*/$newest at step $step" "$tmp/resumed.log" \
  || { cat "$tmp/resumed.log"; fail "the log does not say it resumed from $newest at step $step"; }
[ "$(field "$tmp/resumed.json" resumed_from_step)" = "$step" ] || fail "summary: resumed_from_step is not $step"
[ "$(field "$tmp/resumed.json" steps)" = "$total" ] || fail "summary: steps is not $total"
[ $((step + 400)) -ge "$total" ] || grep -q "checkpoint at step $((step + 400)):" "$tmp/resumed.log" || fail "no checkpoint after the resumed step"
! grep -q "checkpoint at step $step:" "$tmp/resumed.log" || fail "steps up to $step were run again"
[ "$(field "$tmp/resumed.json" model_checksum)" = "$straight" ] || fail "resumed model differs from the uninterrupted one"
# One CSV row per evaluation, none repeated: the rows before the checkpoint are kept, not redone.
[ "$(cut -d, -f1 "$tmp/out/r.metrics.csv" | sort | uniq -d | wc -l)" -eq 0 ] || fail "metrics rows repeated"
[ "$(($(wc -l <"$tmp/out/r.metrics.csv") - 1))" -eq 4 ] || { cat "$tmp/out/r.metrics.csv"; fail "metrics CSV does not hold 4 evaluations"; }

# The newest checkpoint corrupted on disk: skipped with a warning, the previous one used.
ls "$tmp/ckpt" | grep -c '^ckpt-' | grep -qx 3 || fail "not exactly the newest 3 checkpoints kept"
newest=$(ls "$tmp/ckpt" | grep '^ckpt-' | sort | tail -1)
previous=$(ls "$tmp/ckpt" | grep '^ckpt-' | sort | tail -2 | head -1)
printf '\xff\xff\xff\xff' | dd of="$tmp/ckpt/$newest" bs=1 seek=50000 conv=notrunc status=none
timeout 120 "$starling" "${run[@]}" --resume --summary "$tmp/again.json" >"$tmp/again.log" 2>&1 \
  || { cat "$tmp/again.log"; fail "run after corruption failed"; }
grep -q "skipping checkpoint .*/$newest.*CRC" "$tmp/again.log" || { cat "$tmp/again.log"; fail "corrupted $newest not reported"; }
grep -q "resuming from checkpoint .*/$previous" "$tmp/again.log" || { cat "$tmp/again.log"; fail "did not fall back to $previous"; }
[ "$(field "$tmp/again.json" model_checksum)" = "$straight" ] || fail "model after falling back differs"

# Another model: refused, exit 2, naming the file and what differs.
set +e
timeout 60 "$starling" "${run[@]}" --set 'model.hidden=[64]' --resume >"$tmp/mismatch.log" 2>&1
code=$?
set -e
[ "$code" -eq 2 ] || { cat "$tmp/mismatch.log"; fail "mismatched resume exited $code, not 2"; }
grep -q "ckpt-.*\.starling: checkpoint of another run, refused (model:" "$tmp/mismatch.log" \
  || { cat "$tmp/mismatch.log"; fail "mismatch message"; }

# --resume without a folder is a usage error; with an empty one, a fresh start.
set +e
timeout 60 "$starling" train --config "$src/configs/fmnist-mlp.toml" --set data.dataset=synthetic --resume >"$tmp/nodir.log" 2>&1
code=$?
set -e
[ "$code" -eq 2 ] && grep -q "run.checkpoint_dir" "$tmp/nodir.log" || { cat "$tmp/nodir.log"; fail "--resume without a folder"; }
timeout 60 "$starling" "${run[@]}" --set run.epochs=0.5 --set run.checkpoint_dir="$tmp/empty" --resume >"$tmp/fresh.log" 2>&1 \
  || { cat "$tmp/fresh.log"; fail "fresh start failed"; }
grep -q "no valid checkpoint in .*empty; starting from the beginning" "$tmp/fresh.log" || fail "no warning on a fresh start"

# Peers: an all-reduce job with checkpoints, cut back to its checkpoint at iteration 40 on
# every peer, resumed by `launch --resume`: the same models as the uninterrupted job.
base=$((10000 + ($$ % 20000)))  # below the ephemeral range; ctest never runs this beside the launch test
source "$(dirname "$0")/peers_config.sh"
peers_config "$tmp/peers.toml" allreduce $base $((base + 1))
ckpt=(--set run.checkpoint_dir=pckpt)  # relative to the config file
timeout 120 "$starling" launch --config "$tmp/peers.toml" --summary "$tmp/p1.json" >"$tmp/p1.log" 2>&1 \
  || { cat "$tmp/p1.log"; fail "peer job failed"; }
timeout 120 "$starling" launch --config "$tmp/peers.toml" "${ckpt[@]}" --set run.checkpoint_every=20 --set run.checkpoint_keep=10 --summary "$tmp/p2.json" >"$tmp/p2.log" 2>&1 \
  || { cat "$tmp/p2.log"; fail "peer job with checkpoints failed"; }
for peer in 0 1; do
  [ -e "$tmp/pckpt/peer$peer/ckpt-000000040.starling" ] || fail "peer $peer has no checkpoint at 40 (relative to the config)"
  find "$tmp/pckpt/peer$peer" -name 'ckpt-*' ! -name 'ckpt-000000040.starling' -delete
done
timeout 120 "$starling" launch --config "$tmp/peers.toml" "${ckpt[@]}" --resume --summary "$tmp/p3.json" >"$tmp/p3.log" 2>&1 \
  || { cat "$tmp/p3.log"; fail "resumed peer job failed"; }
[ "$(grep -c 'resuming from checkpoint .*ckpt-000000040.starling at step 40' "$tmp/p3.log")" -eq 2 ] \
  || { cat "$tmp/p3.log"; fail "not every peer resumed at 40"; }
sums() { tr -d ' \n' <"$1" | grep -o '"model_checksum":\[[^]]*\]'; }
[ "$(sums "$tmp/p3.json")" = "$(sums "$tmp/p1.json")" ] || fail "resumed peers: $(sums "$tmp/p3.json"), uninterrupted: $(sums "$tmp/p1.json")"
grep -q '"identical_models": true' "$tmp/p3.json" || fail "resumed peers differ"

# Overlapped local SGD (exchange every 3 iterations beside the compute): the checkpoint at
# 40 falls between exchange points, so the exchange in flight is added first; resumed
# there, the peers continue to the same models as the run with checkpoints.
peers_config "$tmp/ov.toml" local-sgd $((base + 2)) $((base + 3))
ov=(--set exchange.period=3 --set exchange.overlap=true --set run.checkpoint_dir=ovckpt --set run.checkpoint_every=20 --set run.checkpoint_keep=10)
timeout 120 "$starling" launch --config "$tmp/ov.toml" "${ov[@]}" --summary "$tmp/o1.json" >"$tmp/o1.log" 2>&1 \
  || { cat "$tmp/o1.log"; fail "overlapped peer job failed"; }
for peer in 0 1; do find "$tmp/ovckpt/peer$peer" -name 'ckpt-*' ! -name 'ckpt-000000040.starling' -delete; done
timeout 120 "$starling" launch --config "$tmp/ov.toml" "${ov[@]}" --resume --summary "$tmp/o2.json" >"$tmp/o2.log" 2>&1 \
  || { cat "$tmp/o2.log"; fail "resumed overlapped peer job failed"; }
[ "$(sums "$tmp/o2.json")" = "$(sums "$tmp/o1.json")" ] || fail "overlapped, resumed: $(sums "$tmp/o2.json"), uninterrupted: $(sums "$tmp/o1.json")"
grep -q '"identical_models": true' "$tmp/o2.json" || fail "overlapped local SGD peers differ"

# An exchange algorithm with state beside the model, on three peers checkpointing every 20
# steps: the job resumed at 40 takes the state up on every peer (the log says so) and ends
# with the uninterrupted job's models. resume_at_40 NAME MODE FIRST_PORT CKPT_DIR [--set K=V]...
resume_at_40() {
  local name=$1 mode=$2 port=$3 dir=$4
  shift 4
  local args=(--set run.checkpoint_dir="$dir" --set run.checkpoint_every=20 --set run.checkpoint_keep=10 "$@")
  peers_config "$tmp/$dir.toml" "$mode" "$port" $((port + 1)) $((port + 2))
  timeout 120 "$starling" launch --config "$tmp/$dir.toml" "${args[@]}" --summary "$tmp/$dir-1.json" >"$tmp/$dir-1.log" 2>&1 \
    || { cat "$tmp/$dir-1.log"; fail "$name peer job failed"; }
  for peer in 0 1 2; do find "$tmp/$dir/peer$peer" -name 'ckpt-*' ! -name 'ckpt-000000040.starling' -delete; done
  timeout 120 "$starling" launch --config "$tmp/$dir.toml" "${args[@]}" --resume --summary "$tmp/$dir-2.json" >"$tmp/$dir-2.log" 2>&1 \
    || { cat "$tmp/$dir-2.log"; fail "resumed $name peer job failed"; }
  [ "$(grep -c "goes on with the checkpoint's state" "$tmp/$dir-2.log")" -eq 3 ] \
    || { cat "$tmp/$dir-2.log"; fail "not every $name peer took up its state"; }
  [ "$(sums "$tmp/$dir-2.json")" = "$(sums "$tmp/$dir-1.json")" ] \
    || fail "$name, resumed: $(sums "$tmp/$dir-2.json"), uninterrupted: $(sums "$tmp/$dir-1.json")"
}

# Gradient tracking keeps x̃, y and d̃; the outer optimizer (local SGD with an outer step,
# resumed at an exchange point) keeps x₀ and u; the compressed all-reduce (4-bit QSGD) keeps
# the common model, its error feedback and where its stochastic rounding stands, and with
# PowerSGD its warm-start Q; CHOCO gossip (4-bit QSGD) keeps its public copies and where its
# rounding stands.
resume_at_40 gradient-tracking gradient-tracking $((base + 4)) gtckpt
resume_at_40 outer-optimizer local-sgd $((base + 7)) outerckpt --set exchange.outer_lr=0.8 --set exchange.outer_momentum=0.5
resume_at_40 compressed-allreduce allreduce $((base + 10)) qsgdckpt --set compression.codec='"qsgd"' --set compression.bits=4
resume_at_40 choco gossip $((base + 13)) chocockpt --set compression.codec='"qsgd"' --set compression.bits=4
resume_at_40 powersgd allreduce $((base + 16)) powerckpt --set compression.codec='"powersgd"' --set compression.rank=2
echo "cli resume end-to-end: ok"
