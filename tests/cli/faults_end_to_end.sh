#!/usr/bin/env bash
# Fault injection on real peer processes over loopback, on synthetic data, one scenario per
# call (each a ctest of its own, bounded in time):
#   gossip_kill        kill -9 one of 4 gossip peers mid-run: the other three finish
#   allreduce_kill     the same with all-reduce: the ring re-forms, survivors identical
#   local-sgd_kill, async-gossip_kill   the same in those modes (not in the suite)
#   min_peers          below exchange.min_peers: the survivors stop with a checkpoint, exit 1
#   join               a new peer joins a running 3-peer all-reduce job and ends with them
#   overlap            local SGD with the exchange beside the compute: a peer joins, then
#                      one is killed while the others' mix is in flight; the survivors end
#                      identical
#   outer              local SGD with an outer step (SlowMo/DiLoCo): a peer joins, then one
#                      is killed; every new view starts a fresh outer optimizer on every
#                      member, and the survivors end identical
#   outer_defer        the same outer step with exchange.slow_peers = "defer" and peer 3 at
#                      node.slowdown = 4: peer 3 defers its pseudo-gradients by several
#                      rounds, and all four end identical
#   text_join          a new peer joins a running 3-peer all-reduce job of the tiny GPT and
#                      ends with them, having gone on from the job's step
#   rejoin             a killed peer restarted with --resume rejoins; all four identical
#   flood              a live peer flooded with malformed frames of every class finishes
#                      and reports the drops by reason
#   async_straggler    a peer paused with SIGSTOP does not stall async gossip
#   allreduce_straggler a short pause shows in all-reduce as wait, with the peer named
# Usage: faults_end_to_end.sh STARLING FLOOD SCENARIO
set -euo pipefail
starling=$1
flood=$2
scenario=$3
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
fail() {
  for f in "$tmp"/p*.log; do echo "== $f"; grep -v "ETA\|info epoch" "$f" | tail -15; done >&2
  echo "FAIL ($scenario): $*" >&2
  exit 1
}
field() { grep "\"$2\":" "$1" | head -1 | sed 's/.*": *//; s/[",]//g'; }
rows() { [ -e "$tmp/out/e2e-peer$1.metrics.csv" ] && echo $(($(wc -l <"$tmp/out/e2e-peer$1.metrics.csv") - 1)) || echo 0; }
# waits (at most 60 s) until a command succeeds
await() { for _ in $(seq 600); do eval "$1" && return 0; sleep 0.1; done; fail "timed out waiting for: $1"; }

source "$(dirname "$0")/peers_config.sh"
base=$((10000 + ($$ % 20000)))
# 4 peers of 20 epochs on 24000 synthetic samples, an evaluation per epoch (the progress
# the scenarios act on), fast failure detection.
job() {
  local mode=$1
  shift
  peers_config "$tmp/c.toml" "$mode" $base $((base + 1)) $((base + 2)) $((base + 3))
  sed -i 's/^epochs = 2$/epochs = 20\neval_every = 1/; s/synthetic_train = 1200/synthetic_train = 24000/; s/hidden = \[32\]/hidden = [64]/' "$tmp/c.toml"
  sed -i 's/^timeout_seconds = 20$/timeout_seconds = 20\nheartbeat_seconds = 0.2\nfailure_timeout_seconds = 2\nstart_timeout_seconds = 3/' "$tmp/c.toml"
  printf '%b' "${FAULTS_EXTRA:-}" >>"$tmp/c.toml"  # e.g. '[compression]\ncodec = "topk"\n'
}
start() {  # start PEER [ARGS...]: one peer in the background, its pid in pid<PEER>
  local id=$1
  shift
  "$starling" peer --config "$tmp/c.toml" --id "$id" "$@" >"$tmp/p$id.log" 2>&1 &
  pids+=($!)
  eval "pid$id=$!"
}
finish() {  # finish PEER...: each must exit 0 within 90 s
  for id in "$@"; do
    local pid
    pid=$(eval echo "\$pid$id")
    timeout 90 tail --pid="$pid" -f /dev/null || fail "peer $id still running"
    wait "$pid" || fail "peer $id exited $?"
  done
}
identical() {
  local first
  first=$(field "$tmp/out/e2e-peer$1.summary.json" model_checksum)
  for id in "$@"; do [ "$(field "$tmp/out/e2e-peer$id.summary.json" model_checksum)" = "$first" ] || fail "peer $id ends with another model"; done
}
# Peers 0-2 start without peer 3 (a view of three), which joins once they have evaluated
# four times; all four finish with one model, peer 3's taken from the job mid-run.
joins_running_job() {
  for id in 0 1 2; do start $id; done
  await 'grep -q "view 0 -> 1" "$tmp/p0.log"'
  await '[ "$(rows 0)" -ge 4 ]'
  start 3 --join
  finish 0 1 2 3
  grep -q "joined view .* taking the model of iteration" "$tmp/p3.log" || fail "peer 3 did not join"
  [ "$(field "$tmp/out/e2e-peer3.summary.json" joined_at_step)" -gt 0 ] || fail "peer 3 joined at step 0"
  identical 0 1 2 3
}
accurate() { for id in "$@"; do awk -v a="$(field "$tmp/out/e2e-peer$id.summary.json" test_accuracy)" 'BEGIN { exit !(a > 0.8) }' || fail "peer $id reached only $a"; done; }

case $scenario in
  gossip_kill | allreduce_kill | local-sgd_kill | async-gossip_kill)
    mode=${scenario%_kill}
    job "$mode"
    for id in 0 1 2 3; do start $id; done
    await '[ "$(rows 3)" -ge 6 ]'
    kill -9 "$pid3"
    finish 0 1 2
    accurate 0 1 2
    grep -Eq "peer 3 is dead: (no message for|timed out, says peer)" "$tmp/p0.log" || fail "the death is not logged"
    if [ "$mode" != async-gossip ]; then
      for id in 0 1 2; do
        [ "$(field "$tmp/out/e2e-peer$id.summary.json" view_changes)" -ge 1 ] || fail "peer $id saw no view change"
        grep -q '"members_at_end": \["0", "1", "2"\]' "$tmp/out/e2e-peer$id.summary.json" || fail "peer $id did not end with {0, 1, 2}"
      done
    fi
    [ "$mode" = gossip ] || [ "$mode" = async-gossip ] || identical 0 1 2
    ;;
  min_peers)
    job allreduce
    for id in 0 1 2; do start $id --set exchange.min_peers=3 --set run.checkpoint_dir=ck --set run.checkpoint_every=100000; done
    await 'grep -q "view 0 -> 1" "$tmp/p0.log"'  # peer 3 never came: {0, 1, 2}, still 3
    await '[ "$(rows 2)" -ge 4 ]'
    kill -9 "$pid2"
    for id in 0 1; do
      pid=$(eval echo "\$pid$id")
      timeout 60 tail --pid="$pid" -f /dev/null || fail "peer $id did not stop"
      set +e
      wait "$pid"
      rc=$?
      set -e
      [ "$rc" -eq 1 ] || fail "peer $id exited $rc, not 1"
      grep -q "the peers cannot go on: .*only 2 live peer(s) {0, 1} left, fewer than exchange.min_peers = 3; checkpoint at step" "$tmp/p$id.log" \
        || fail "peer $id did not say why it stopped"
      ls "$tmp/ck/peer$id"/ckpt-*.starling >/dev/null 2>&1 || fail "peer $id wrote no checkpoint"
    done
    ;;
  join)
    job allreduce
    joins_running_job
    grep -Eq "took the model of iteration [0-9]+ \([0-9a-f]{16}\) from peer\(s\) \{[0-9]+: [0-9]+ chunks, [0-9]+: " "$tmp/p3.log" \
      || fail "peer 3 did not take the model from two or more members at once"
    accurate 0 1 2 3
    ;;
  overlap)
    job local-sgd
    ov=(--set exchange.overlap=true --set exchange.period=4)
    for id in 0 1 2; do start $id "${ov[@]}"; done
    await 'grep -q "view 0 -> 1" "$tmp/p0.log"'
    await '[ "$(rows 0)" -ge 4 ]'
    start 3 "${ov[@]}" --join
    await '[ "$(rows 3)" -ge 2 ]'
    kill -9 "$pid1"
    finish 0 2 3
    grep -q "joined view .* taking the model of iteration" "$tmp/p3.log" || fail "peer 3 did not join"
    grep -Eq "peer 1 is dead: (no message for|timed out, says peer)" "$tmp/p0.log" || fail "the death is not logged"
    grep -q "exchange beside the compute" "$tmp/p0.log" || fail "the exchange was not overlapped"
    identical 0 2 3
    accurate 0 2 3
    ;;
  outer)
    job local-sgd
    outer=(--set exchange.outer_lr=0.8 --set exchange.outer_momentum=0.5 --set exchange.period=4)
    for id in 0 1 2; do start $id "${outer[@]}"; done
    await 'grep -q "view 0 -> 1" "$tmp/p0.log"'
    await '[ "$(rows 0)" -ge 4 ]'
    start 3 "${outer[@]}" --join
    await '[ "$(rows 3)" -ge 2 ]'
    kill -9 "$pid1"
    finish 0 2 3
    grep -q "joined view .* taking the model of iteration" "$tmp/p3.log" || fail "peer 3 did not join"
    grep -Eq "peer 1 is dead: (no message for|timed out, says peer)" "$tmp/p0.log" || fail "the death is not logged"
    identical 0 2 3
    accurate 0 2 3
    ;;
  rejoin)
    job allreduce
    ck=(--set run.checkpoint_dir=ck --set run.checkpoint_every=1000)
    for id in 0 1 2 3; do start $id "${ck[@]}"; done
    await '[ -e "$tmp/ck/peer3/ckpt-000001000.starling" ]'
    kill -9 "$pid3"
    await 'grep -q "view 0 -> 1" "$tmp/p0.log"'
    start 3 "${ck[@]}" --resume
    finish 0 1 2 3
    grep -q "resuming from checkpoint .*ckpt-000001000.starling" "$tmp/p3.log" || fail "peer 3 did not resume"
    grep -q "the job is already running: joining it" "$tmp/p3.log" || fail "peer 3 did not rejoin"
    identical 0 1 2 3
    ;;
  flood)
    job allreduce
    # A receive cap far under what even a slowed flood sends, and far over the peers' own rate
    # (a few hundred messages a second), so rate_limited drops do not depend on the host's load.
    for id in 0 1 2; do start $id --set exchange.max_message_mb=1 --set exchange.max_receive_rate=5000; done
    await 'grep -q "view 0 -> 1" "$tmp/p0.log"'
    "$flood" --endpoint "tcp://127.0.0.1:$base" --as 3 --seconds 6 --rate 200000 --cap-mb 1 >"$tmp/flood.txt" || fail "the flood tool failed"
    finish 0 1 2
    identical 0 1 2
    accurate 0
    for reason in unknown_sender bad_identity frame_count bad_magic unsupported_version unknown_message_type truncated \
                  oversized crc_mismatch non_finite stale_view rate_limited; do
      [ "$(grep -A30 '"drops"' "$tmp/out/e2e-peer0.summary.json" | grep "\"$reason\":" | tr -dc 0-9)" -gt 0 ] \
        || fail "no $reason drops in the summary"
    done
    grep -q "dropped .* message(s) in the last" "$tmp/p0.log" || fail "drops not logged"
    ;;
  async_straggler)
    job async-gossip
    for id in 0 1 2 3; do start $id; done
    await '[ "$(rows 2)" -ge 6 ]'
    kill -STOP "$pid2"
    before=$(rows 0)
    sleep 3
    during=$(rows 0)
    kill -CONT "$pid2"
    finish 0 1 2 3
    [ "$during" -gt "$before" ] || fail "peer 0 made no progress while peer 2 was paused ($before -> $during epochs)"
    grep -q "far ahead of step .*: taking its model and position" "$tmp/p2.log" || fail "peer 2 did not catch up by taking over"
    accurate 0 1 2 3
    ;;
  allreduce_straggler)
    job allreduce
    for id in 0 1 2 3; do start $id; done
    await '[ "$(rows 2)" -ge 6 ]'
    kill -STOP "$pid2"
    sleep 1.3
    kill -CONT "$pid2"
    finish 0 1 2 3
    grep -q "straggler: round .* has waited .* for peer 2" "$tmp/p0.log" || fail "the straggler is not named"
    identical 0 1 2 3
    awk -v e="$(field "$tmp/out/e2e-peer0.summary.json" exchange_seconds)" 'BEGIN { exit !(e > 1.0) }' || fail "the wait is not in exchange_seconds"
    ;;
  outer_defer)
    job local-sgd
    outer=(--set exchange.outer_lr=0.8 --set exchange.outer_momentum=0.5 --set exchange.period=4
      --set exchange.slow_peers='"defer"')
    for id in 0 1 2; do start $id "${outer[@]}"; done
    start 3 "${outer[@]}" --set node.slowdown=4
    finish 0 1 2 3
    grep -Eq "slow peers: this peer's next pseudo-gradient is for ([2-9]|[1-9][0-9]) round\(s\) on" "$tmp/p3.log" ||
      fail "the slow peer never deferred its pseudo-gradient"
    identical 0 1 2 3
    accurate 0 1 2 3
    ;;
  text_join)
    tiny_gpt_job "$tmp/c.toml" 3000 $base $((base + 1)) $((base + 2)) $((base + 3))
    sed -i "s|^name = .*|name = \"e2e\"|; s|^out_dir = .*|out_dir = \"$tmp/out\"|; s|^eval_steps = .*|eval_steps = 100|" "$tmp/c.toml"
    sed -i 's/^timeout_seconds = 30$/timeout_seconds = 20\nheartbeat_seconds = 0.2\nfailure_timeout_seconds = 2\nstart_timeout_seconds = 3/' "$tmp/c.toml"
    joins_running_job
    grep -q "continuing from the running job at step" "$tmp/p3.log" || fail "peer 3 did not go on from the job's step"
    ;;
  *) fail "unknown scenario" ;;
esac
echo "faults end-to-end $scenario: ok"
