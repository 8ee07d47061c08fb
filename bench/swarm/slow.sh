#!/usr/bin/env bash
# Slow peers in an open swarm (issue #50, docs/swarm.md#slow-peers), on loopback: 8 peers
# train the GPT with DiLoCo at H = 50 on 4-bit (qsgd) pseudo-gradients (swarm_gpt_job),
# validated every 50 steps, in three runs, interleaved --repeat times:
#   a  no peer slowed, strict synchronous rounds (the default);
#   b  2 peers at node.slowdown = 4 (an emulated CPU 4 times slower), exchange.slow_peers = "wait";
#   c  the same 2 peers, exchange.slow_peers = "defer" (when the binary has no such key: skipped
#      with a note by default, an error when --runs names c).
# slow_report.py reads the logs and summaries, prints a table and the ratios of the done-when
# (c's fast peers idle ≤ 10 % of the wall time, c's time to the target val_bpb ≤ 0.7 × b's,
# c's final val_bpb within 2 % of a's), and exits 1 when c misses one.
set -euo pipefail

usage() {
  cat <<EOF
usage: bench/swarm/slow.sh [options]
  --starling PATH     the starling binary (default: build/cli/starling)
  --steps N           run.steps (default 2000: 0.5-2 min a run on a shared 2-core host)
  --eval-steps N      run.eval_steps (default 50: each validation on the round's common model)
  --slowdown F        node.slowdown of the slow peers (default 4)
  --slow-peers N      how many peers are slow: the last N started (default 2 of 8)
  --runs LIST         which runs, comma-separated, in order: a, b, c (default a,b,c; c skipped
                      with a note when the binary has no exchange.slow_peers)
  --repeat N          rounds of the interleaved runs (default 1)
  --target BPB        the target val_bpb (default: the worst final val_bpb of the round's runs)
  --port P            the first port (default 10000 + pid mod 20000)
  --run-timeout S     the longest a run may take (default 600)
  --keep DIR          keep configs, logs and summaries in DIR (default: a temporary folder, removed)
  --set KEY=VALUE     a config override for every peer of every run (repeatable)
Peers run under nice -n 10.
EOF
}

starling=build/cli/starling steps=2000 eval_steps=50 slowdown=4 slow_peers=2 runs=a,b,c repeat=1 target=""
port=$((10000 + ($$ % 20000))) run_timeout=600 keep="" sets=() runs_named=0
while [ $# -gt 0 ]; do
  case $1 in
    --starling) starling=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --eval-steps) eval_steps=$2; shift 2 ;;
    --slowdown) slowdown=$2; shift 2 ;;
    --slow-peers) slow_peers=$2; shift 2 ;;
    --runs) runs=$2 runs_named=1; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --run-timeout) run_timeout=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "slow.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -x "$starling" ] || { echo "slow.sh: no starling binary at $starling (--starling)" >&2; exit 2; }
[[ "$runs" =~ ^[abc](,[abc])*$ ]] || { echo "slow.sh: --runs is a comma-separated list of a, b, c; got '$runs'" >&2; exit 2; }
[[ "$slow_peers" =~ ^[1-7]$ ]] || { echo "slow.sh: --slow-peers is 1 to 7, got '$slow_peers'" >&2; exit 2; }
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "slow.sh: --repeat is a positive integer, got '$repeat'" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "$keep" ]; then mkdir -p "$keep"; tmp=$(cd "$keep" && pwd); else tmp=$(mktemp -d); fi
peers=8 pids=() swarm_nice=10
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  [ -n "$keep" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$starling" invite --new-owner-key -o "$tmp/owner.key" >"$tmp/owner.toml" 2>/dev/null
source "$here/../../tests/cli/swarm_job.sh"
swarm_gpt_job "$tmp/job.toml" "$tmp/owner.toml" $peers "$steps" "$tmp/out" "$eval_steps"
# Every peer validates the same model, 8 of them on a 2-core host: with the config's 2 % (1,600
# windows) a validation costs more than the 50 steps between two; 0.5 % (400) costs less.
sed -i 's|^validation_fraction = .*|validation_fraction = 0.005|' "$tmp/job.toml"
"$starling" invite --key "$tmp/owner.key" --job "$tmp/job.toml" "${sets[@]}" --expires 2 -o "$tmp/invite.txt" 2>/dev/null
"$starling" config --config "$tmp/job.toml" "${sets[@]}" --set node.slowdown="$slowdown" >/dev/null ||
  { echo "slow.sh: the job config or an override is refused (above)" >&2; exit 2; }

# exchange.slow_peers is newer than node.slowdown: without it, b is the strict default and c cannot run.
slow_peers_key=1
if ! "$starling" config --config "$tmp/job.toml" --set exchange.slow_peers='"defer"' >/dev/null 2>"$tmp/key.err"; then
  slow_peers_key=0
  why="this binary refuses exchange.slow_peers ($(sed 's/^\[[^]]*\] //' "$tmp/key.err" | head -1))"
  if [ "$runs_named" = 1 ] && [[ "$runs" == *c* ]]; then echo "slow.sh: $why: run c cannot run" >&2; exit 2; fi
  echo "slow.sh: $why; run b uses the strict default and run c is skipped" >&2
else  # the rule for slow peers is part of the job: c's peers hold an invitation to c's job
  "$starling" invite --key "$tmp/owner.key" --job "$tmp/job.toml" "${sets[@]}" --set exchange.slow_peers='"defer"' \
    --expires 2 -o "$tmp/invite-defer.txt" 2>/dev/null
fi

# swarm RUN: one run of the job, its logs and summaries in $tmp/RUN (a1, b1, c1, a2, ...).
swarm() {
  local run=$1 dir=$tmp/$1 k first=$port args mode=() invitation=$tmp/invite.txt
  case ${run:0:1} in
    b) [ "$slow_peers_key" = 0 ] || mode=(--set exchange.slow_peers='"wait"') ;;
    c) mode=(--set exchange.slow_peers='"defer"') invitation=$tmp/invite-defer.txt ;;
  esac
  port=$((port + peers))  # every run on ports of its own: none waits for the last run's to close
  mkdir -p "$dir"
  echo "slow.sh: $(date +%T) run $run" >&2
  pids=()
  for ((k = 0; k < peers; k++)); do
    args=(--listen "127.0.0.1:$((first + k))" --set run.out_dir="\"$dir/out\"" "${sets[@]}" "${mode[@]}")
    [ "$k" -eq 0 ] || args+=(--bootstrap "127.0.0.1:$first" --invitation "$invitation")
    [ "${run:0:1}" = a ] || [ "$k" -lt $((peers - slow_peers)) ] || args+=(--set node.slowdown="$slowdown")
    swarm_peer "$dir/p$k.log" "${args[@]}"
    sleep 0.3  # ids in start order
  done
  local deadline=$(($(date +%s) + run_timeout))
  for ((k = 0; k < peers; k++)); do
    timeout $((deadline - $(date +%s) > 0 ? deadline - $(date +%s) : 1)) tail --pid="${pids[$k]}" -f /dev/null ||
      { echo "FAIL: run $run: peer $k still running after $run_timeout s" >&2; exit 1; }
    wait "${pids[$k]}" || { tail -5 "$dir/p$k.log" >&2; echo "FAIL: run $run: peer $k exited non-zero" >&2; exit 1; }
  done
  pids=()
}

for ((r = 1; r <= repeat; r++)); do
  for run in ${runs//,/ }; do
    if [ "$run" = c ] && [ "$slow_peers_key" = 0 ]; then continue; fi
    swarm "$run$r"
  done
done

set +e
python3 "$here/slow_report.py" "$tmp" --peers $peers --slow-peers "$slow_peers" --slowdown "$slowdown" ${target:+--target "$target"}
result=$?
set -e
[ "$slow_peers_key" = 1 ] || [[ "$runs" != *c* ]] ||
  echo "run c pending: the binary has no exchange.slow_peers; the done-when bounds were not judged" >&2
[ -z "$keep" ] || echo "slow.sh: logs in $tmp" >&2
exit "$result"
