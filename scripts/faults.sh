#!/usr/bin/env bash
# `make faults`: the fault scenarios of the failure-behaviour promises, on real
# Fashion-MNIST with the shipped configs, on this host. Each scenario's logs and summaries
# go to results/faults/<scenario>/, and a table of what was measured to
# results/faults/report.txt:
#   gossip-kill     4 gossip peers, one SIGKILLed at ~30 % of the run: the other three finish
#   allreduce-kill  the same with all-reduce: the ring re-forms, the survivors stay identical
#   train-resume    `starling train` SIGKILLed at ~30 % and restarted with --resume
#   flood           an all-reduce job whose peer 0 gets malformed frames of every class for
#                   15 s while it trains (peer 3 is held back: the flood speaks as peer 3)
# Usage: scripts/faults.sh [BUILD_DIR] [SCENARIO...]; the peers listen on FAULTS_PORT
# (default 5600) and the three ports after it.
set -euo pipefail
build=${1:-build}
shift || true
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(gossip-kill allreduce-kill train-resume flood)
starling=$build/cli/starling
flood=$build/tests/tools/starling_flood
out=results/faults
mkdir -p "$out"
report=$out/report.txt
: >"$report"
port=${FAULTS_PORT:-5600}
fast=(--set exchange.heartbeat_seconds=0.5 --set exchange.failure_timeout_seconds=5 --set exchange.start_timeout_seconds=10)
for i in 0 1 2 3; do fast+=(--set "peer.$i.endpoint=\"tcp://127.0.0.1:$((port + i))\""); done

field() { grep "\"$2\":" "$1" | head -1 | sed 's/.*": *//; s/[",]//g'; }
rows() { [ -e "$1" ] && echo $(($(wc -l <"$1") - 1)) || echo 0; }
note() { echo "$*" | tee -a "$report"; }
await_rows() {  # await_rows CSV N PID: until the CSV has N evaluations (or the process ends)
  while [ "$(rows "$1")" -lt "$2" ]; do kill -0 "$3" 2>/dev/null || return 1; sleep 0.5; done
}
# Lists, per finished peer, its accuracy and checksum, and the launch's verdict.
peers_line() {
  local dir=$1 line="" first="" same=yes
  for s in "$dir"/out/*-peer*.summary.json; do
    local id acc sum
    id=$(field "$s" peer_id) acc=$(field "$s" test_accuracy) sum=$(field "$s" model_checksum)
    line+=" peer $id: $(awk -v a="$acc" 'BEGIN { printf "%.2f %%", 100 * a }'),"
    [ -z "$first" ] && first=$sum
    [ "$sum" = "$first" ] || same=no
  done
  echo "${line%,}; identical models: $same"
}

kill_scenario() {  # kill_scenario NAME CONFIG
  local name=$1 config=$2 dir=$out/$1
  rm -rf "$dir" && mkdir -p "$dir/out"
  "$starling" launch --config "$config" "${fast[@]}" --set run.out_dir="$dir/out" --summary "$dir/summary.json" \
    >"$dir/launch.log" 2>&1 &
  local launcher=$!
  local csv
  csv=$dir/out/$(grep '^name' "$config" | sed 's/.*"\(.*\)".*/\1/')-peer3.metrics.csv
  await_rows "$csv" 3 "$launcher" || { note "$name: the job ended before it could be killed"; return 1; }
  local victim
  victim=$(pgrep -P "$launcher" -f -- "--id 3 ")
  kill -9 "$victim"
  note "$name: peer 3 (pid $victim) killed with SIGKILL after 3 of 10 epochs"
  wait "$launcher" || { note "$name: launch failed, see $dir/launch.log"; return 1; }
  grep -h "view .* -> " "$dir/launch.log" | head -3 | sed "s/^/$name:   /" | tee -a "$report"
  note "$name: survivors$(peers_line "$dir")"
}

train_resume() {
  local dir=$out/train-resume
  rm -rf "$dir" && mkdir -p "$dir"
  local run=(train --config configs/fmnist-mlp.toml --set run.out_dir="$dir/out" --set run.checkpoint_dir="$PWD/$dir/ckpt"
             --set run.checkpoint_every=1000 --summary "$dir/summary.json")
  "$starling" "${run[@]}" >"$dir/first.log" 2>&1 &
  local pid=$!
  while [ ! -e "$dir/ckpt/ckpt-000006000.starling" ]; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || { note "train-resume: the run ended before it could be killed"; return 1; }
  wait "$pid" 2>/dev/null || true
  note "train-resume: killed with SIGKILL at step $(ls "$dir/ckpt" | sort | tail -1 | tr -dc 0-9 | sed 's/^0*//')+ of 18750"
  "$starling" "${run[@]}" --resume >"$dir/resumed.log" 2>&1 || { note "train-resume: the resumed run failed"; return 1; }
  note "train-resume: $(grep -o 'resuming from checkpoint .*' "$dir/resumed.log"); test accuracy $(awk -v a="$(field "$dir/summary.json" test_accuracy)" 'BEGIN { printf "%.2f %%", 100 * a }')"
}

flood_scenario() {
  local dir=$out/flood config=configs/fmnist-mlp-4peers-allreduce.toml
  rm -rf "$dir" && mkdir -p "$dir/out"
  "$starling" launch --config "$config" "${fast[@]}" --hold 3 --set run.out_dir="$dir/out" --summary "$dir/summary.json" \
    >"$dir/launch.log" 2>&1 &
  local launcher=$!
  until grep -q "view 0 -> 1" "$dir/launch.log"; do kill -0 "$launcher" 2>/dev/null || break; sleep 0.5; done
  sleep 2
  "$flood" --endpoint "tcp://127.0.0.1:$port" --as 3 --seconds 15 --rate 100000 >"$dir/flood.txt"
  note "flood: sent to peer 0 for 15 s: $(awk '{ n += $2 } END { print n }' "$dir/flood.txt") frames ($(tr '\n' ' ' <"$dir/flood.txt"))"
  wait "$launcher" || { note "flood: launch failed, see $dir/launch.log"; return 1; }
  note "flood: peers$(peers_line "$dir")"
  note "flood: peer 0's drops: $(sed -n '/"drops"/,/}/p' "$dir/out/fmnist-mlp-4peers-allreduce-peer0.summary.json" | grep ':' | grep -v drops | tr -d ' \n')"
}

status=0
for s in "${scenarios[@]}"; do
  case $s in
    gossip-kill) kill_scenario gossip-kill configs/fmnist-mlp-4peers-gossip.toml || status=1 ;;
    allreduce-kill) kill_scenario allreduce-kill configs/fmnist-mlp-4peers-allreduce.toml || status=1 ;;
    train-resume) train_resume || status=1 ;;
    flood) flood_scenario || status=1 ;;
    *) echo "unknown scenario $s" >&2; status=2 ;;
  esac
done
echo "report: $report"
exit $status
