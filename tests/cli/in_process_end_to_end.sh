#!/usr/bin/env bash
# `starling launch --in-process`: the peers of a job as threads of one process.
#  1. Twelve all-reduce peers give the same model bits in one process as twelve processes.
#  2. 128 gossip peers (one [[peer]] entry with count = 128) finish in one process with no
#     peer lost, each watching 13 others (the peers 2^k places away) rather than 127.
set -euo pipefail
starling=$1
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind
source "$(dirname "$0")/peers_config.sh"

checksums() { grep -o '"model_checksum": \[[^]]*\]' "$1"; }

ports=()
for ((i = 0; i < 12; i++)); do ports+=($((base + i))); done
peers_config "$tmp/twelve.toml" allreduce "${ports[@]}"
timeout 120 "$starling" launch --config "$tmp/twelve.toml" --summary "$tmp/processes.json" >"$tmp/processes.log" 2>&1 ||
  { tail -20 "$tmp/processes.log"; fail "twelve processes failed"; }
timeout 120 "$starling" launch --config "$tmp/twelve.toml" --in-process --summary "$tmp/threads.json" >"$tmp/threads.log" 2>&1 ||
  { tail -20 "$tmp/threads.log"; fail "twelve peers in one process failed"; }
grep -q '"identical_models": true' "$tmp/threads.json" || fail "the in-process all-reduce peers differ"
[ "$(checksums "$tmp/processes.json")" = "$(checksums "$tmp/threads.json")" ] ||
  fail "in one process the peers ended with other bits than as processes: $(checksums "$tmp/threads.json")"

peers_config "$tmp/many.toml" gossip "$base"
sed -i 's/^hidden = .*/hidden = [16]/; s/^epochs = .*/epochs = 1/; s/^timeout_seconds = .*/timeout_seconds = 60\nfailure_timeout_seconds = 20/' "$tmp/many.toml"
echo "count = 128" >>"$tmp/many.toml"
timeout 200 "$starling" launch --config "$tmp/many.toml" --in-process --summary "$tmp/many.json" >"$tmp/many.log" 2>&1 ||
  { grep -v "info" "$tmp/many.log" | tail -20; fail "128 peers in one process failed"; }
grep -q '"peers": 128' "$tmp/many.json" || fail "not all 128 peers finished: $(grep '"peers"' "$tmp/many.json")"
grep -q '"peers_lost": \[\]' "$tmp/many.json" || fail "peers lost: $(grep peers_lost "$tmp/many.json")"
! grep -q "is dead: \(no message\|never heard\|timed out\)" "$tmp/many.log" || fail "a live peer was taken for dead"
echo "in one process: twelve all-reduce peers match twelve processes bit for bit; 128 gossip peers finished"
