#!/usr/bin/env bash
# An open swarm with CURVE (docs/swarm.md): each peer makes its own key pair at its start and
# logs the address others join with, HOST:PORT/KEY. Peer 0 starts the job; peer 1 joins with
# peer 0's address and key, peer 2 with peer 1's (which sends it on to the leader, peer 0, by
# the leader's key); all three train the MLP on Fashion-MNIST (all-reduce) over encrypted
# links. Meanwhile bad joins exit 2 naming their cause: no key in the address, a wrong key
# (the handshake fails: nothing answers), and a peer without CURVE. Peers behind NAT with
# CURVE: swarm_nat_end_to_end.sh curve.
#   swarm_curve_end_to_end.sh STARLING
set -euo pipefail
starling=$1
tmp=$(mktemp -d)
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$starling" invite --new-owner-key -o "$tmp/owner.key" >"$tmp/owner.toml" 2>/dev/null
source "$(dirname "$0")/swarm_job.sh"
swarm_job "$tmp/job.toml" "$tmp/owner.toml" run.out_dir="\"$tmp/out\"" security.curve=true swarm.data_parts=3 \
  swarm.start_peers=3 run.epochs=1
for i in 1 2 3 4; do "$starling" invite --key "$tmp/owner.key" --job "$tmp/job.toml" --expires 1 -o "$tmp/invite$i.txt" 2>/dev/null; done

swarm_peer "$tmp/p0.log" --listen "127.0.0.1:$base"
a0=$(swarm_address "$tmp/p0.log")
[[ "$a0" == "127.0.0.1:$base/"* ]] && [ "${#a0}" -eq $((${#base} + 10 + 1 + 40)) ] || fail "peer 0's address is '$a0'"
swarm_peer "$tmp/p1.log" --listen "127.0.0.1:$((base + 1))" --bootstrap "$a0" --invitation "$tmp/invite1.txt"
a1=$(swarm_address "$tmp/p1.log")
[ "${a1: -40}" != "${a0: -40}" ] || fail "peers 0 and 1 have one key"

swarm_bad_join no-key "with security.curve give HOST:PORT/KEY" --listen "127.0.0.1:$((base + 10))" --bootstrap "127.0.0.1:$base" \
  --invitation "$tmp/invite4.txt"
swarm_bad_join wrong-key "is ${a1: -40} the key it logs" --listen "127.0.0.1:$((base + 11))" \
  --bootstrap "127.0.0.1:$base/${a1: -40}" --invitation "$tmp/invite4.txt"
swarm_bad_join plain "no Starling peer of a running swarm answered" --set security.curve=false --listen "127.0.0.1:$((base + 12))" \
  --bootstrap "127.0.0.1:$base" --invitation "$tmp/invite4.txt"
swarm_peer "$tmp/p2.log" --listen "127.0.0.1:$((base + 2))" --bootstrap "$a1" --invitation "$tmp/invite2.txt"

failed=0
for i in 0 1 2; do
  wait "${pids[$i]}" || { echo "peer $i exited $?:"; tail -5 "$tmp/p$i.log"; failed=$((failed + 1)); }
done
[ "$failed" -eq 0 ] || fail "$failed of 3 swarm peers failed"
for i in 0 1 2; do
  summary="$tmp/out/swarm-peer$i.summary.json"
  [ -f "$summary" ] || { tail -5 "$tmp/p$i.log"; fail "peer $i wrote no summary"; }
  grep -qF '"members_at_end": ["0", "1", "2"]' "$summary" || { grep members_at_end "$summary"; fail "peer $i did not end in the view of all 3"; }
  accuracy=$(sed -n 's/^ *"test_accuracy": \([0-9.]*\),*$/\1/p' "$summary")
  python3 -c "import sys; sys.exit(0 if float('$accuracy') > 0.75 else 1)" || fail "peer $i ended at test accuracy $accuracy"
  echo "peer $i: test_accuracy $accuracy"
done
grep -q "sends this peer to the swarm's leader, peer 0" "$tmp/p2.log" || fail "peer 2 was not sent on to the leader"
echo "a swarm of 3 with CURVE finished; 3 bad joins exited 2 naming their cause"
