#!/usr/bin/env bash
# D-Cliques' bad input through the executable: an unknown inter-clique option and a clique
# that a split by class leaves without some class exit 2 naming file:line:key, from
# `partition`, `launch` and a single `peer`, before anything trains.
set -euo pipefail
starling=$1
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind

source "$(dirname "$0")/peers_config.sh"
source "$(dirname "$0")/expect_exit.sh"

peers_config "$tmp/job.toml" clique-averaging $(seq $base $((base + 15)))
sed -i "s|^out_dir = .*|out_dir = \"$tmp/results\"|" "$tmp/job.toml"
sed -i 's/^mode = "clique-averaging"$/mode = "clique-averaging"\ninter_clique = "smallworld"/' "$tmp/job.toml"
line=$(grep -n '^inter_clique' "$tmp/job.toml" | cut -d: -f1)
for cmd in partition launch; do
  expect_exit 2 "job.toml:$line: exchange.inter_clique: expected one of \"fully-connected\", \"small-world\"" \
    $cmd --config "$tmp/job.toml"
done
expect_exit 2 "job.toml:$line: exchange.inter_clique" peer --config "$tmp/job.toml" --id 0

# Sixteen peers of one class each in cliques of eight: no clique can hold the ten classes.
sed -i 's/^inter_clique = "smallworld"$/inter_clique = "small-world"\nclique_size = 8/' "$tmp/job.toml"
sed -i 's/^synthetic_test = 300$/synthetic_test = 300\npartition = "shards"\nclasses_per_peer = 1/' "$tmp/job.toml"
line=$(grep -n '^clique_size' "$tmp/job.toml" | cut -d: -f1)
for cmd in partition launch; do
  expect_exit 2 "job.toml:$line: exchange.clique_size: 8 leaves clique 1 of 2 (peers" $cmd --config "$tmp/job.toml"
done
expect_exit 2 "without classes" peer --config "$tmp/job.toml" --id 3
[ ! -e "$tmp/results" ] || fail "bad D-Cliques input wrote outputs"

# Two classes a peer: cliques of eight can hold all ten, and the split goes through.
sed -i 's/^classes_per_peer = 1$/classes_per_peer = 2/' "$tmp/job.toml"
"$starling" partition --config "$tmp/job.toml" --out "$tmp/p.json" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "partition refused cliques of ten"; }
echo "d-cliques end-to-end: ok"
