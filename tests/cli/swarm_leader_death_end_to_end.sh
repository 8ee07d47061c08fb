#!/usr/bin/env bash
# A newcomer that joins just after the swarm's leader died (docs/swarm.md): peers 0, 1 and 2
# train; peer 0, the leader, is killed with -9, and at once a newcomer bootstraps through
# peer 1, which still takes peer 0 for alive and sends the newcomer on to it. The newcomer
# must not give up on the dead leader: it asks peer 1 again until peer 1, now the leader,
# admits it, and then it trains. The job is long; the test stops every peer when the
# newcomer has trained a round.
#   swarm_leader_death_end_to_end.sh STARLING
set -euo pipefail
starling=$1
tmp=$(mktemp -d)
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; tail -n 8 "$tmp"/*.log >&2; exit 1; }
await() {  # await FILE PATTERN SECONDS [PID]: until FILE has a line with PATTERN (bounded; PID alive)
  for ((t = 0; t < $3 * 10; t++)); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    [ -z "${4:-}" ] || kill -0 "$4" 2>/dev/null || { grep -q -- "$2" "$1" && return 0; return 1; }
    sleep 0.1
  done
  return 1
}

"$starling" invite --new-owner-key -o "$tmp/owner.key" >"$tmp/owner.toml" 2>/dev/null
source "$(dirname "$0")/swarm_job.sh"
swarm_job "$tmp/job.toml" "$tmp/owner.toml" run.name='"leader"' run.epochs=1000 run.out_dir="\"$tmp/out\"" \
  exchange.failure_timeout_seconds=3 swarm.start_peers=3 swarm.join_timeout_seconds=30
"$starling" invite --key "$tmp/owner.key" --job "$tmp/job.toml" --expires 1 -o "$tmp/invite.txt" 2>/dev/null

peer() { local name=$1; shift; swarm_peer "$tmp/$name.log" "$@"; }  # peer NAME ARGS...: its log NAME.log
peer p0 --listen "127.0.0.1:$base"
for i in 1 2; do
  sleep 0.3
  peer "p$i" --listen "127.0.0.1:$((base + i))" --bootstrap "127.0.0.1:$base" --invitation "$tmp/invite.txt"
done
await "$tmp/p1.log" "state digest after round 20:" 60 || fail "the swarm of 3 did not train"
kill -9 "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
peer p3 --listen "127.0.0.1:$((base + 3))" --bootstrap "127.0.0.1:$((base + 1))" --invitation "$tmp/invite.txt"
await "$tmp/p3.log" "sends this peer to the swarm's leader, peer 0" 20 "${pids[3]}" || fail "peer 1 did not send the newcomer to the dead leader (the race this test needs)"
await "$tmp/p3.log" "the swarm admits this peer as peer 3" 30 "${pids[3]}" || fail "the newcomer was not admitted after the leader died"
grep -q "does not answer; asking tcp://127.0.0.1:$((base + 1)) again" "$tmp/p3.log" || fail "the newcomer did not ask peer 1 again"
await "$tmp/p3.log" "state digest after round" 30 "${pids[3]}" || fail "the newcomer did not train"
grep -q "view .* -> .*: members {1, 2, 3}" "$tmp/p1.log" || fail "peer 1 did not take the newcomer into a view of {1, 2, 3}"
echo "the newcomer sent to a dead leader asked again, was admitted as peer 3 and trains: $(grep -m1 'admits this peer' "$tmp/p3.log" | sed 's/^.*join: //')"
