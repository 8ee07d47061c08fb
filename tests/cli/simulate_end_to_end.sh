#!/usr/bin/env bash
# `starling simulate` as a user runs it: a bad SPEC, peer count, distribution or config exits
# 2 with a message that names the problem and measures nothing; a real sweep prints the
# table and writes JSON whose one-peer row is speedup 1 and whose bytes grow with the peers.
set -euo pipefail
starling=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_exit.sh"

config="$src/configs/fmnist-mlp-4peers-allreduce.toml"
expect_exit 2 "bad rate" simulate --config "$config" --network fast
expect_exit 2 "bad latency" simulate --config "$config" --network 10gbit:5parsecs
expect_exit 2 "outside 1..1024" simulate --config "$config" --peers 0
expect_exit 2 "outside 1..1024" simulate --config "$config" --peers 1,2,2048
expect_exit 2 "not a number" simulate --config "$config" --peers four
expect_exit 2 "straggler" simulate --config "$config" --straggler lognormal:x
expect_exit 2 "exchange.mode" simulate --config "$src/configs/fmnist-mlp.toml" --peers 4
expect_exit 2 "optimizer.batch" simulate --config "$config" --set optimizer.batch=0
expect_exit 0 "Usage" simulate --help

expect_exit 0 "speedup" simulate --config "$config" --peers 1,4,64 --network 1gbit:50us --straggler lognormal:0.1 \
  --json "$tmp/p.json"
/usr/bin/python3 - "$tmp/p.json" <<'PY' || fail "bad JSON predictions"
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["predictions"]
assert [r["peers"] for r in rows] == [1, 4, 64], rows
assert abs(rows[0]["speedup"] - 1) < 1e-9 and rows[0]["bytes_per_peer_per_round"] == 0
assert rows[1]["bytes_per_peer_per_round"] < rows[2]["bytes_per_peer_per_round"]
assert all(r["samples_per_second"] > 0 and r["epoch_seconds"] > 0 for r in rows)
assert j["mode"] == "allreduce" and j["network"] == "1gbit:50us"
PY
# Loopback: two peers train together here for a moment (real learners, a real all-reduce
# through the transport), and that round is the prediction's.
expect_exit 0 "training together" simulate --config "$config" --peers 2 --network loopback --json "$tmp/l.json"
/usr/bin/python3 - "$tmp/l.json" <<'PY' || fail "the loopback prediction is not the measured host round"
import json, sys
j = json.load(open(sys.argv[1]))
host, row = j["measured"]["host_round_seconds_2"], j["predictions"][0]
assert host > 0 and abs(row["round_seconds"] - host) <= 1e-9 * host + 1e-12, (host, row)
PY
# The Kubernetes example's job names its peers by DNS: a valid config for the peers and here.
expect_exit 0 "k8s-mlp-allreduce" simulate --config "$src/examples/k8s/job.toml" --network 10gbit
grep -q "^ *4 " "$tmp/out" || { cat "$tmp/out"; fail "the k8s job is not simulated at its 4 peers"; }
echo "simulate end-to-end: ok"
