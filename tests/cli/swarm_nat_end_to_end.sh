#!/usr/bin/env bash
# Peers behind NAT in an open swarm on loopback (docs/swarm.md#peers-behind-nat): peers 0 and
# 1 are reachable; peers 2 and 3 start with --behind-nat, so nobody dials them. D-PSGD on the
# ring 0-1-2-3 (drawn over the members in id order): 1-2 and 3-0 go over the connections the
# peers behind NAT dial, 2-3 through a relay (peer 0, the first peer each dialed, while it
# answers). Every peer ends above test accuracy 0.75, and only those behind NAT use a relay.
#   swarm_nat_end_to_end.sh STARLING mlp|curve|relay_death|gpt
# With relay_death, peer 0 (the relay) is killed with -9 once the job trains: peers 2 and 3
# move to peer 1 and the job finishes with three. With gpt, the job is the GPT with DiLoCo
# (H = 50, 4-bit pseudo-gradients; its ring all-reduce has the same pairs), whose members all
# take part in the round on the models as drawn, and all four end on one model. With curve,
# the MLP's job with security.curve: the newcomers join with peer 0's HOST:PORT/KEY, and what
# the relay passes on between peers 2 and 3 travels in boxes only they can open.
set -euo pipefail
starling=$1
scenario=${2:-}
[[ "$scenario" =~ ^(mlp|curve|relay_death|gpt)$ ]] || { echo "usage: swarm_nat_end_to_end.sh STARLING mlp|curve|relay_death|gpt" >&2; exit 2; }
tmp=$(mktemp -d)
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
fail() {
  for f in "$tmp"/p*.log; do echo "== $f"; grep -v "ETA\|info epoch\|state digest" "$f" | tail -12; done >&2
  echo "FAIL: $*" >&2
  exit 1
}
# Bytes in a peer's "relays: passed on P bytes ...; sent S of ..." line: field 1 (P) or 2 (S); 0 without one.
relayed() { sed -n 's/.*relays: passed on \([0-9]*\) bytes.*; sent \([0-9]*\) of .*/\1 \2/p' "$tmp/p$1.log" | awk -v f="$2" '{ print $f } END { if (!NR) print 0 }'; }

"$starling" invite --new-owner-key -o "$tmp/owner.key" >"$tmp/owner.toml" 2>/dev/null
source "$(dirname "$0")/swarm_job.sh"
epochs=2
[ "$scenario" = relay_death ] && epochs=30  # long enough to kill the relay mid-run
if [ "$scenario" = gpt ]; then
  swarm_gpt_job "$tmp/job.toml" "$tmp/owner.toml" 4 150 "$tmp/out"
  sed -i 's/^timeout_seconds = .*/timeout_seconds = 20/' "$tmp/job.toml"
else
  swarm_job "$tmp/job.toml" "$tmp/owner.toml" run.out_dir="\"$tmp/out\"" exchange.mode='"gossip"' run.epochs=$epochs \
    run.eval_every=1 exchange.heartbeat_seconds=0.2 exchange.failure_timeout_seconds=2 \
    security.curve="$([ "$scenario" = curve ] && echo true || echo false)"
fi
"$starling" invite --key "$tmp/owner.key" --job "$tmp/job.toml" --expires 1 -o "$tmp/invite.txt" 2>/dev/null
peer() { local id=$1; shift; swarm_peer "$tmp/p$id.log" "$@"; }  # peer ID ARGS...: its log pID.log
joiner() { peer "$@" --bootstrap "$seed" --invitation "$tmp/invite.txt"; }
peer 0 --listen "127.0.0.1:$base"
seed=$(swarm_address "$tmp/p0.log")
sleep 0.3
joiner 1 --listen "127.0.0.1:$((base + 1))"
sleep 0.3
joiner 2 --listen "127.0.0.1:$((base + 2))" --behind-nat
sleep 0.3
joiner 3 --listen "127.0.0.1:$((base + 3))" --behind-nat
survivors="0 1 2 3"
if [ "$scenario" = relay_death ]; then
  for _ in $(seq 300); do grep -q "info epoch 3" "$tmp/p3.log" 2>/dev/null && break; sleep 0.1; done
  killed_at=$(date +%H:%M:%S.%N)
  kill -9 "${pids[0]}"
  survivors="1 2 3"
fi
for i in $survivors; do
  timeout 60 tail --pid="${pids[$i]}" -f /dev/null || fail "peer $i still running after 60 s"
  wait "${pids[$i]}" || fail "peer $i exited $?"
done
metric=test_accuracy
[ "$scenario" = gpt ] && metric=val_bpb
for i in $survivors; do
  summary="$tmp/out/swarm-peer$i.summary.json"
  [ -f "$summary" ] || fail "peer $i wrote no summary"
  value=$(sed -n "s/^ *\"$metric\": \([0-9.]*\),*\$/\1/p" "$summary")
  [ "$metric" = val_bpb ] || python3 -c "import sys; sys.exit(0 if $value > 0.75 else 1)" || fail "peer $i ended at test accuracy $value"
  [ "$metric" = test_accuracy ] || [ "$value" = "$(sed -n 's/^ *"val_bpb": \([0-9.]*\),*$/\1/p' "$tmp/out/swarm-peer0.summary.json")" ] ||
    fail "peer $i ended at val_bpb $value, not on peer 0's model"
  echo "peer $i: $metric $value; passed on $(relayed $i 1) bytes for others, sent $(relayed $i 2) through a relay"
done
grep -q "is peer 2" "$tmp/p0.log" && grep -q "is peer 3" "$tmp/p0.log" || fail "peers 2 and 3 did not join as 2 and 3"
for i in 2 3; do [ "$(relayed $i 2)" -gt 0 ] || fail "peer $i sent nothing through a relay"; done
[ "$(relayed 1 2)" -eq 0 ] || fail "reachable peer 1 sent through a relay"
if [ "$scenario" = relay_death ]; then
  [ "$(relayed 1 1)" -gt 0 ] || fail "peer 1 did not take over as the relay"
  for i in 2 3; do
    moved=$(sed -n 's/^\[\([0-9:.]*\)\].*go through peer 1$/\1/p' "$tmp/p$i.log" | tail -1)
    [ -n "$moved" ] || fail "peer $i did not say it moved to peer 1"
    seconds=$(seconds_between "$killed_at" "$moved")
    python3 -c "import sys; sys.exit(0 if $seconds < 10 else 1)" || fail "peer $i moved to peer 1 after $seconds s"
    echo "peer $i moved to relay peer 1 $seconds s after the kill"
  done
  echo "the relay was killed; peers behind NAT moved to peer 1 and the job finished"
else
  [ $(($(relayed 0 1) + $(relayed 1 1))) -gt 0 ] || fail "no reachable peer relayed"
  [ "$(relayed 0 2)" -eq 0 ] || fail "reachable peer 0 sent through a relay"
  echo "a swarm with 2 of 4 peers behind NAT finished"
fi
