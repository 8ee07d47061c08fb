#!/usr/bin/env bash
# Churn on an open swarm (issue #50, docs/swarm.md#churn), on loopback: peer 0 starts a job
# with --listen, newcomers join it with --bootstrap and an invitation; then for DURATION
# seconds, every PERIOD seconds, one random live peer (the first peer and the leader
# included) is killed with -9 and a new one joins through a random live peer. The job must
# finish on the survivors, every synchronous round's state digests must agree among the
# peers that published one, and every joiner must train within one round of its download.
# The logs are judged by churn_check.py; a table goes to stdout; exit 1 when a check fails.
set -euo pipefail

usage() {
  cat <<EOF
usage: churn.sh [options]
  --starling PATH     the starling binary (default: build/cli/starling)
  --duration S        seconds of churn (default 300)
  --period S          seconds between kills (default 20)
  --peers N           peers at the start, peer 0 included (default 4)
  --epochs E          run.epochs, over one of the 4 data parts (default 120: 7–10 min under churn on a 2-core host;
                      the job must outlast the churn: with --duration 60, say 20)
  --mode M            exchange.mode: local-sgd (default) or allreduce
  --spare-first       never kill the first peer (default: it may be killed like any other)
  --seed N            seed of the random choices (default 1)
  --port P            the first port (default 10000 + pid mod 20000)
  --finish-timeout S  how long the job may run on after the churn (default 600)
  --keep DIR          keep the config, logs and summaries in DIR (default: a temporary folder, removed)
  --set KEY=VALUE     a config override for every peer (repeatable)
EOF
}

starling=build/cli/starling duration=300 period=20 peers=4 epochs=120 mode=local-sgd
spare_first=0 seed=1 port=$((10000 + ($$ % 20000))) finish_timeout=600 keep="" sets=()
while [ $# -gt 0 ]; do
  case $1 in
    --starling) starling=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --period) period=$2; shift 2 ;;
    --peers) peers=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --spare-first) spare_first=1; shift ;;
    --seed) seed=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --finish-timeout) finish_timeout=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "churn.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ -x "$starling" ] || { echo "churn.sh: no starling binary at $starling (--starling)" >&2; exit 2; }
[ "$peers" -ge 2 ] || { echo "churn.sh: --peers must be at least 2" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "$keep" ]; then mkdir -p "$keep"; tmp=$(cd "$keep" && pwd); else tmp=$(mktemp -d); fi
RANDOM=$seed

names=() pids=() ports=() alive=() codes=()  # one entry per peer started, in order: p0, p1, ...
cleanup() {
  for i in "${!pids[@]}"; do kill -9 "${pids[$i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$keep" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$starling" invite --new-owner-key -o "$tmp/owner.key" >"$tmp/owner.toml" 2>/dev/null
source "$here/../../tests/cli/swarm_job.sh"
swarm_job "$tmp/job.toml" "$tmp/owner.toml" run.name='"churn"' run.epochs="$epochs" run.out_dir="\"$tmp/out\"" \
  model.hidden='[1024, 1024]' exchange.mode="\"$mode\"" exchange.period=20 exchange.start_timeout_seconds=60 \
  swarm.start_peers="$peers" swarm.join_timeout_seconds=30
rm -f "$tmp/invite.txt"
"$starling" invite --key "$tmp/owner.key" --job "$tmp/job.toml" --expires 2 -o "$tmp/invite.txt" 2>/dev/null

start_peer() {  # start_peer [BOOTSTRAP-PORT...]: the next peer, in the background, its log pK.log
  local k=${#names[@]} p=$((port + ${#names[@]})) b
  local args=(--listen "127.0.0.1:$p")
  for b in "$@"; do args+=(--bootstrap "127.0.0.1:$b"); done
  [ $# -eq 0 ] || args+=(--invitation "$tmp/invite.txt")
  # nice execs starling, so $! is the peer itself: kill -9 reaches it, not a wrapper.
  nice -n 10 "$starling" peer --config "$tmp/job.toml" "${sets[@]}" "${args[@]}" >"$tmp/p$k.log" 2>&1 &
  names+=("p$k") pids+=($!) ports+=("$p") alive+=(1)
  echo "$(date +%s.%N) start p$k port $p bootstrap $*" >>"$tmp/events.log"
}
refresh() {  # marks peers that exited on their own
  for i in "${!pids[@]}"; do
    [ "${alive[$i]}" = 1 ] && ! kill -0 "${pids[$i]}" 2>/dev/null && { reap "$i"; echo "$(date +%s.%N) exited ${names[$i]}" >>"$tmp/events.log"; }
  done
  return 0
}
live() {  # the indices of live peers (spare: leave out peer 0)
  local spare=${1:-0}
  for i in "${!pids[@]}"; do [ "${alive[$i]}" = 1 ] && { [ "$spare" = 0 ] || [ "$i" != 0 ]; } && echo "$i"; done
  return 0
}
reap() {  # reap K: waits for peer K's exit (quietly: no job notice) and notes its status
  local code=0
  wait "${pids[$1]}" 2>/dev/null || code=$?
  alive[$1]=0 codes[$1]=$code
}

: >"$tmp/events.log"
start_peer
for ((i = 1; i < peers; i++)); do sleep 0.3; start_peer "$port"; done
# The churn starts once the job trains: peer 0's first state digest (bounded).
for ((t = 0; t < 1200; t++)); do
  grep -q "state digest after round" "$tmp/p0.log" 2>/dev/null && break
  refresh
  [ "${alive[0]}" = 1 ] || { tail -5 "$tmp/p0.log"; echo "FAIL: peer 0 exited before training" >&2; exit 1; }
  sleep 0.1
done
grep -q "state digest after round" "$tmp/p0.log" || { echo "FAIL: the job did not start training in 120 s" >&2; exit 1; }
echo "churn: $peers peers train ($mode, $epochs epochs); killing one every $period s for $duration s" >&2

kills=0 joins=0
churn_end=$(($(date +%s) + duration))
while [ "$(date +%s)" -lt "$churn_end" ]; do
  sleep "$period"
  refresh
  # $RANDOM is drawn here, not in a subshell, so that --seed fixes the whole sequence.
  mapfile -t candidates < <(live "$spare_first")
  [ ${#candidates[@]} -gt 0 ] || { echo "FAIL: no live peer left to kill" >&2; break; }
  victim=${candidates[$((RANDOM % ${#candidates[@]}))]}
  kill -9 "${pids[$victim]}" 2>/dev/null || true
  reap "$victim"
  kills=$((kills + 1))
  echo "$(date +%s.%N) kill ${names[$victim]}" >>"$tmp/events.log"
  # The newcomer's --bootstrap: two random live peers (one when only one is left), tried in turn.
  draw=$RANDOM
  mapfile -t candidates < <(live 0 | shuf --random-source=<(yes "$draw"))
  [ ${#candidates[@]} -gt 0 ] || { echo "FAIL: no live peer left to join through" >&2; break; }
  via=("${candidates[@]:0:2}")
  start_peer $(for v in "${via[@]}"; do echo "${ports[$v]}"; done)
  joins=$((joins + 1))
  echo "churn: $(date +%T) killed ${names[$victim]}, ${names[-1]} joins through $(for v in "${via[@]}"; do printf '%s ' "${names[$v]}"; done)($(live | wc -l) live)" >&2
done
echo "$(date +%s.%N) churn_end" >>"$tmp/events.log"

# The survivors finish the job (bounded).
deadline=$(($(date +%s) + finish_timeout))
while [ "$(date +%s)" -lt "$deadline" ]; do
  refresh
  [ -n "$(live)" ] || break
  sleep 1
done
refresh
hung=$(live | wc -l)
for i in $(live); do kill -9 "${pids[$i]}" 2>/dev/null || true; echo "$(date +%s.%N) hung ${names[$i]}" >>"$tmp/events.log"; done
for i in "${!pids[@]}"; do
  [ -n "${codes[$i]:-}" ] || reap "$i"
  echo "${names[$i]} ${codes[$i]}" >>"$tmp/exits.txt"
done
[ "$hung" -eq 0 ] || echo "churn: $hung peer(s) still ran $finish_timeout s after the churn; killed" >&2

set +e
python3 "$here/churn_check.py" "$tmp" --kills "$kills" --joins "$joins" --initial "$peers"
result=$?
set -e
[ -z "$keep" ] || echo "churn: logs in $tmp" >&2
exit "$result"
