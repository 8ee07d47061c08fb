#!/usr/bin/env bash
# Peers behind NAT across network namespaces (issue #50, docs/swarm.md#peers-behind-nat):
# 8 peers in 8 namespaces (scripts/netns.sh), peers 5 and 6 behind NAT router 0 and peer 7
# behind NAT router 1 (nftables masquerade; nobody can dial them). Each peer starts with the
# job config, an invitation and one bootstrap address (peer 0's); those behind NAT with
# --behind-nat. The same job then runs on a fixed roster of 8 peers on loopback, and each
# peer's final metric (test accuracy, or validation bits per byte) is compared with its
# roster twin's: exit 1 when one differs by more than 1 %, or a reachable peer used a relay.
# With --kill-relay, peer 0 (the relay of the peers behind NAT) is killed with -9 mid-run
# instead: each of them must name its next relay within 10 s, and the other 7 must finish.
# With --curve both jobs run with security.curve: the newcomers bootstrap with peer 0's
# HOST:PORT/KEY, and the relay passes on boxes (docs/swarm.md#curve-in-a-swarm).
#   --job mlp   the MLP on Fashion-MNIST with D-PSGD on the ring (default)
#   --job gpt   configs/fortunes-gpt-8peers.toml's GPT with DiLoCo at H = 50 on 4-bit
#               (qsgd) pseudo-gradients
# Needs root (namespaces) and nftables; exits 2 otherwise or on bad options.
set -euo pipefail

usage() {
  cat <<'TEXT'
usage: sudo bench/swarm/nat.sh [--job mlp|gpt] [--kill-relay] [--curve] [--starling PATH] [--epochs E] [--rate RATE] [--keep DIR]
  --curve      both jobs with security.curve (the roster's keys from `starling keygen`)
  --kill-relay kill the relay (peer 0) at epoch 3 of the MLP job; no roster run
  --epochs E   run.epochs of the MLP job, over one of 8 data parts (default 4; 30 with --kill-relay)
  --rate RATE  a tbf rate limit on every namespace's link (e.g. 1gbit; default none)
  --keep DIR   keep configs, logs and summaries in DIR (default: a temporary folder, removed)
TEXT
}
job=mlp starling=build/cli/starling epochs="" rate="" keep="" kill_relay=0 curve=false
while [ $# -gt 0 ]; do
  case $1 in
    --job) job=$2; shift 2 ;;
    --starling) starling=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --kill-relay) kill_relay=1; shift ;;
    --curve) curve=true; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "nat.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[[ "$job" =~ ^(mlp|gpt)$ ]] || { echo "nat.sh: --job is mlp or gpt, got '$job'" >&2; exit 2; }
[ "$kill_relay" -eq 0 ] || [ "$job" = mlp ] || { echo "nat.sh: --kill-relay goes with --job mlp" >&2; exit 2; }
[ -n "$epochs" ] || epochs=$((kill_relay ? 30 : 4))
[ -x "$starling" ] || { echo "nat.sh: no starling binary at $starling (--starling)" >&2; exit 2; }
starling=$(cd "$(dirname "$starling")" && pwd)/$(basename "$starling")
root=$(cd "$(dirname "$0")/../.." && pwd)
netns="$root/scripts/netns.sh"
if [ -n "$keep" ]; then mkdir -p "$keep"; tmp=$(cd "$keep" && pwd); else tmp=$(mktemp -d); fi
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  "$netns" down 8 >/dev/null 2>&1 || true
  [ -n "$keep" ] || rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
peers=8 behind_nat=" 5 6 7 " port=5600

# The job: its config without peers, the owner's [swarm] lines, and an invitation.
"$starling" invite --new-owner-key -o "$tmp/owner.key" >"$tmp/owner.toml" 2>/dev/null
source "$root/tests/cli/swarm_job.sh"
if [ "$job" = mlp ]; then
  swarm_job "$tmp/job.toml" "$tmp/owner.toml" run.out_dir="\"$tmp/out\"" exchange.mode='"gossip"' run.epochs="$epochs" \
    run.eval_every=1 swarm.data_parts=$peers swarm.start_peers=$peers exchange.start_timeout_seconds=60 \
    swarm.join_timeout_seconds=60 security.curve=$curve
  metric=test_accuracy
else
  swarm_gpt_job "$tmp/job.toml" "$tmp/owner.toml" $peers 500 "$tmp/out"
  printf '[security]\ncurve = %s\n' "$curve" >>"$tmp/job.toml"
  metric=val_bpb
fi
"$starling" invite --key "$tmp/owner.key" --job "$tmp/job.toml" --expires 2 -o "$tmp/invite.txt" 2>/dev/null

# finish NAME ID...: waits (at most 20 min) for those peers; fails naming one that exited non-zero.
finish() {
  local name=$1 i
  shift
  for i in "$@"; do
    timeout 1200 tail --pid="${pids[$i]}" -f /dev/null || fail "$name peer $i still running after 20 min"
    wait "${pids[$i]}" || { tail -5 "$tmp/$name$i.log" >&2; fail "$name peer $i exited $?"; }
  done
  pids=()
}
all=$(seq 0 $((peers - 1)))

field() { sed -n "s/^ *\"$2\": \\([0-9.]*\\),*\$/\\1/p" "$1" | head -1; }
seconds_since() { python3 -c "import time; print(round(time.time() - $1))"; }

# The swarm in namespaces.
"$netns" up $peers $rate --nat 0:5,6 --nat 1:7 >/dev/null
started=$(date +%s.%N)
for i in $(seq 0 $((peers - 1))); do
  [ "$i" -ne 1 ] || bootstrap=$(swarm_address "$tmp/swarm0.log")  # HOST:PORT, with CURVE /KEY
  args=(--listen "$("$netns" addr "$i"):$port")
  [ "$i" -eq 0 ] || args+=(--bootstrap "$bootstrap" --invitation "$tmp/invite.txt")
  [[ "$behind_nat" == *" $i "* ]] && args+=(--behind-nat)
  "$netns" exec "$i" "$starling" peer --config "$tmp/job.toml" "${args[@]}" >"$tmp/swarm$i.log" 2>&1 &
  pids+=($!)
  sleep 0.3  # ids in start order: the peer of namespace i is peer i
done
if [ "$kill_relay" -eq 1 ]; then
  for _ in $(seq 1200); do grep -q "info epoch 3\." "$tmp/swarm0.log" && break; sleep 0.1; done
  grep -q "info epoch 3\." "$tmp/swarm0.log" || fail "peer 0 did not reach epoch 3 in 120 s"
  killed_at=$(date +%H:%M:%S.%N)
  kill -9 "${pids[0]}" || fail "peer 0 exited before it could be killed"
  finish swarm $(seq 1 $((peers - 1)))
  echo "| peer behind NAT | next relay | named after the kill | test_accuracy |"
  echo "|---|---|---|---|"
  status=0
  for i in $behind_nat; do
    line=$(grep "go through peer" "$tmp/swarm$i.log" | tail -1)
    at=$(sed -n 's/^\[\([0-9:.]*\)\].*/\1/p' <<<"$line")
    [ -n "$at" ] || { echo "peer $i named no next relay" >&2; status=1; continue; }
    seconds=$(seconds_between "$killed_at" "$at")
    echo "| $i | peer ${line##* } | $seconds s | $(field "$tmp/out/swarm-peer$i.summary.json" test_accuracy) |"
    python3 -c "import sys; sys.exit(0 if $seconds < 10 else 1)" || status=1
  done
  [ "$status" -eq 0 ] || fail "a peer behind NAT did not move to another relay within 10 s"
  echo "ok: the relay was killed; the peers behind NAT moved within 10 s and the job finished"
  exit 0
fi
finish swarm $all
swarm_seconds=$(seconds_since "$started")
for i in $(seq 1 $((peers - 1))); do
  grep -q "admits this peer as peer $i;" "$tmp/swarm$i.log" || fail "namespace $i's peer is not peer $i"
done
"$netns" down $peers >/dev/null

# The same job on a fixed roster on loopback.
cp "$tmp/job.toml" "$tmp/roster.toml"
sed -i "s|^out_dir = .*|out_dir = \"$tmp/roster-out\"|" "$tmp/roster.toml"
for i in $(seq 0 $((peers - 1))); do
  printf '[[peer]]\nid = %d\nendpoint = "tcp://127.0.0.1:%d"\n' "$i" $((port + i)) >>"$tmp/roster.toml"
done
[ "$curve" = false ] || "$starling" keygen --config "$tmp/roster.toml" --out "$tmp/keys" >/dev/null
started=$(date +%s.%N)
for i in $(seq 0 $((peers - 1))); do
  "$starling" peer --config "$tmp/roster.toml" --id "$i" >"$tmp/roster$i.log" 2>&1 &
  pids+=($!)
done
finish roster $all
roster_seconds=$(seconds_since "$started")

# The table, and the 1 % check.
relays() { sed -n 's/.*relays: passed on \([0-9]*\) bytes.*; sent \([0-9]*\) of this peer.s \([0-9]*\) bytes.*/\1 \2 \3/p' "$1"; }
echo "job $job: the swarm took $swarm_seconds s, the roster $roster_seconds s (8 peers on $(nproc) cores)"
echo "| peer | behind NAT | $metric, swarm | $metric, roster | difference | passed on for others (B) | sent through a relay (B) |"
echo "|---|---|---|---|---|---|---|"
status=0 relayed=0
for i in $(seq 0 $((peers - 1))); do
  s=$(field "$tmp/out/swarm-peer$i.summary.json" $metric)
  r=$(field "$tmp/roster-out/swarm-peer$i.summary.json" $metric)
  [ -n "$s" ] && [ -n "$r" ] || fail "peer $i: no $metric in a summary"
  passed=0 through=0
  read -r passed through _ <<<"$(relays "$tmp/swarm$i.log")" || true
  relayed=$((relayed + ${passed:-0}))
  nat=no
  [[ "$behind_nat" == *" $i "* ]] && nat=yes
  echo "| $i | $nat | $s | $r | $(python3 -c "print(f'{100 * ($s - $r) / $r:+.2f} %')") | ${passed:-0} | ${through:-0} |"
  python3 -c "import sys; sys.exit(0 if abs($s - $r) <= 0.01 * $r else 1)" || status=1
  [ "$nat" = yes ] || [ "${through:-0}" -eq 0 ] || { echo "peer $i is reachable but sent through a relay" >&2; status=1; }
done
echo "relays passed on $relayed bytes in all"
[ "$status" -eq 0 ] || fail "a peer's $metric differs from its roster twin's by more than 1 %, or a reachable peer used a relay"
echo "ok: every peer within 1 % of its twin on the fixed roster"
