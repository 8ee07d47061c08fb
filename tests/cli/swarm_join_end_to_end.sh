#!/usr/bin/env bash
# An open swarm on loopback (docs/swarm.md): the owner makes a key pair and invitations; peer
# 0 starts the job with --listen alone, three newcomers join it with one --bootstrap address
# and an invitation each, and all four train the MLP on Fashion-MNIST together (all-reduce).
# Meanwhile bad joins each exit 2 naming their cause: a dead bootstrap address, a port that
# is not a Starling peer (a plain HTTP server), no invitation, a forged one (another owner's
# key), a tampered one, another job's config, and an unknown --fault. The swarm finishes as if they had not happened: every peer
# ends in the view of all four with a test accuracy far above chance (0.1).
#   swarm_join_end_to_end.sh STARLING [MODE]   MODE: allreduce (default), or gossip: D-PSGD
#                                              on a ring, drawn anew over the members (in id
#                                              order) at every view change
set -euo pipefail
starling=$1
mode=${2:-allreduce}
tmp=$(mktemp -d)
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind
pids=() swarm=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$starling" invite --new-owner-key -o "$tmp/owner.key" >"$tmp/owner.toml" 2>/dev/null
[ "$(stat -c %a "$tmp/owner.key")" = 600 ] || fail "the owner's key file is not mode 0600"
"$starling" invite --new-owner-key -o "$tmp/forger.key" >/dev/null 2>&1
source "$(dirname "$0")/swarm_job.sh"
swarm_job "$tmp/job.toml" "$tmp/owner.toml" run.out_dir="\"$tmp/out\"" exchange.mode="\"$mode\""
for i in 1 2 3; do "$starling" invite --key "$tmp/owner.key" --job "$tmp/job.toml" --expires 1 -o "$tmp/invite$i.txt" 2>/dev/null; done
# A forger's invitation: `invite` will not sign for a job that names another owner's key, so
# the forger signs its copy of the job naming its own key (the same job id is out of reach:
# the owner's key is part of the job description). A tampered one: a genuine invitation with
# its expiry removed.
set +e
"$starling" invite --key "$tmp/forger.key" --job "$tmp/job.toml" -o "$tmp/x.txt" >"$tmp/forger.out" 2>&1
code=$?
set -e
[ "$code" -eq 2 ] && grep -q "another owner's" "$tmp/forger.out" || { cat "$tmp/forger.out"; fail "invite signed for a job of another owner"; }
sed "s/^owner_key = .*/owner_key = \"$(sed -n 's/^public //p' "$tmp/forger.key")\"/" "$tmp/job.toml" >"$tmp/forged-job.toml"
"$starling" invite --key "$tmp/forger.key" --job "$tmp/forged-job.toml" -o "$tmp/forged.txt" 2>/dev/null
sed 's/^expires .*/expires 0/' "$tmp/invite1.txt" >"$tmp/tampered.txt"

peer() {  # peer NAME ARGS...: a `starling peer` of the job in the background, its log NAME.log
  local name=$1
  shift
  timeout 90 "$starling" peer --config "$tmp/job.toml" "$@" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
  swarm+=($!)
}
# Peer 0 starts the job and waits for swarm.start_peers = 4; the bad joins that reach the
# swarm come while it waits with 3 members (two through peer 1, which sends them on to the
# leader, peer 0), then the fourth peer joins and the job trains.
peer p0 --listen "127.0.0.1:$base"
for i in 1 2; do
  sleep 0.3
  peer "p$i" --listen "127.0.0.1:$((base + i))" --bootstrap "127.0.0.1:$base" --invitation "$tmp/invite$i.txt"
done
python3 -m http.server --bind 127.0.0.1 $((base + 20)) >/dev/null 2>&1 &
pids+=($!)
swarm_bad_join uninvited "holds no invitation" --listen "127.0.0.1:$((base + 12))" --bootstrap "127.0.0.1:$((base + 1))"
swarm_bad_join forged "not the job owner's" --listen "127.0.0.1:$((base + 13))" --bootstrap "127.0.0.1:$((base + 1))" --invitation "$tmp/forged.txt"
swarm_bad_join tampered "not the job owner's" --listen "127.0.0.1:$((base + 15))" --bootstrap "127.0.0.1:$base" --invitation "$tmp/tampered.txt"
swarm_bad_join other-job "differs from this swarm's at optimizer.lr: 0.05 here, 0.2 in the joiner's config" \
  --set optimizer.lr=0.2 --listen "127.0.0.1:$((base + 14))" --bootstrap "127.0.0.1:$base" --invitation "$tmp/invite1.txt"
peer p3 --listen "127.0.0.1:$((base + 3))" --bootstrap "127.0.0.1:$((base + 2))" --invitation "$tmp/invite3.txt"
# The joins that never reach the swarm, while it trains.
swarm_bad_join dead "no bootstrap address accepts connections" --listen "127.0.0.1:$((base + 10))" --bootstrap "127.0.0.1:$((base + 19))"
swarm_bad_join http "no Starling peer of a running swarm answered" --listen "127.0.0.1:$((base + 11))" --bootstrap "127.0.0.1:$((base + 20))"
swarm_bad_join fault "no fault 'lying'" --fault lying --listen "127.0.0.1:$((base + 16))" --bootstrap "127.0.0.1:$base" --invitation "$tmp/invite1.txt"

failed=0
for i in 0 1 2 3; do
  wait "${swarm[$i]}" || { echo "peer $i exited $?:"; tail -5 "$tmp/p$i.log"; failed=$((failed + 1)); }
done
[ "$failed" -eq 0 ] || fail "$failed of 4 swarm peers failed"
for i in 0 1 2 3; do
  summary="$tmp/out/swarm-peer$i.summary.json"
  [ -f "$summary" ] || { tail -5 "$tmp/p$i.log"; fail "peer $i wrote no summary"; }
  grep -qF '"members_at_end": ["0", "1", "2", "3"]' "$summary" || { grep members_at_end "$summary"; fail "peer $i did not end in the view of all 4"; }
  accuracy=$(sed -n 's/^ *"test_accuracy": \([0-9.]*\),*$/\1/p' "$summary")
  python3 -c "import sys; sys.exit(0 if float('$accuracy') > 0.75 else 1)" || fail "peer $i ended at test accuracy $accuracy"
  echo "peer $i: test_accuracy $accuracy, view changes $(sed -n 's/^ *"view_changes": \([0-9]*\),*$/\1/p' "$summary")"
done
grep -q "exchange $mode" "$tmp/p0.log" || fail "peer 0 did not run $mode"
grep -q "refused the newcomer" "$tmp/p0.log" || fail "peer 0 logged no refusal"
# Peer 3 asked peer 2, which sent it on to the leader, peer 0, which handed out id 3.
grep -q "sends this peer to the swarm's leader, peer 0" "$tmp/p3.log" || fail "peer 3 was not sent on to the leader"
echo "a swarm of 4 joined with one address each finished; 7 bad joins exited 2 naming their cause"
