#!/usr/bin/env bash
# 32 `starling peer` processes started by hand about 1 s apart (gossip over a ring, a tiny
# MLP on synthetic data) form one job: every peer finishes, none of them takes the others for
# a running job and asks to join (issue #15: peers that saw others past round 0 did, and at
# scale no member admitted them), and every peer ends in the view of all 32.
set -euo pipefail
starling=$1
n=32
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind

source "$(dirname "$0")/peers_config.sh"
pids=()
stop_peers() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap 'stop_peers; rm -rf "$tmp"' EXIT

ports=()
for ((i = 0; i < n; i++)); do ports+=($((base + i))); done
peers_config "$tmp/job.toml" gossip "${ports[@]}"
# Every peer is heard within the start timeout (the spread is about n seconds), so each one
# is a start participant; a failure timeout above the default keeps 32 peers on two cores
# from taking a descheduled peer for dead.
sed -i 's/^hidden = .*/hidden = [16]/; s/^timeout_seconds = .*/timeout_seconds = 60\nstart_timeout_seconds = 90\nfailure_timeout_seconds = 15/' "$tmp/job.toml"

for ((i = 0; i < n; i++)); do
  timeout 150 "$starling" peer --config "$tmp/job.toml" --id "$i" >"$tmp/peer$i.log" 2>&1 &
  pids+=($!)
  sleep 1
done
failed=0
for ((i = 0; i < n; i++)); do
  wait "${pids[$i]}" || { echo "peer $i exited $?:"; tail -5 "$tmp/peer$i.log"; failed=$((failed + 1)); }
done
pids=()
[ "$failed" -eq 0 ] || fail "$failed of $n peers failed"

joiners=$(cat "$tmp"/peer*.log | grep -c "already running" || true)
[ "$joiners" -eq 0 ] || { grep -h "already running" "$tmp"/peer*.log; fail "$joiners peers took the starting job for a running one"; }
everyone=$(printf '"%d", ' $(seq 0 $((n - 1))))
everyone="[${everyone%, }]"
for ((i = 0; i < n; i++)); do
  summary="$tmp/out/e2e-peer$i.summary.json"
  [ -f "$summary" ] || fail "peer $i wrote no summary"
  grep -qF "\"members_at_end\": $everyone" "$summary" || { grep members_at_end "$summary"; fail "peer $i did not end in the view of all $n"; }
done
echo "all $n peers started about 1 s apart finished as one job"
