#!/usr/bin/env bash
# `starling train` as a user runs it: bad input exits 2 and writes nothing; a short run on
# synthetic data writes the metrics CSV and a summary JSON with the promised fields.
set -euo pipefail
starling=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_exit.sh"

printf '[optimizer]\nbatch = 0\n' >"$tmp/bad.toml"
expect_exit 2 "bad.toml:2: optimizer.batch" train --config "$tmp/bad.toml" --summary "$tmp/s.json"
[ ! -e "$tmp/s.json" ] || fail "summary written for a bad config"
expect_exit 2 "no-such.toml" train --config "$tmp/no-such.toml"
expect_exit 2 "optimizer.lr" train --config "$src/configs/fmnist-mlp.toml" --set optimizer.lr=-1
expect_exit 2 "section.key=value" train --config "$src/configs/fmnist-mlp.toml" --set nonsense
expect_exit 2 "config" train
printf '[exchange]\nmode = "async-gossip"\noverlap = true\n' >"$tmp/async.toml"
expect_exit 2 "async.toml:3: exchange.overlap: expected false" train --config "$tmp/async.toml"
expect_exit 0 "Usage" train --help
# What a bug report needs: version and commit, the ISA in use (a forced one says so), backends.
expect_exit 0 "^starling [0-9][0-9.]* (commit " --version
grep -q "^backends: native" "$tmp/out" || fail "--version names no backend"
STARLING_ISA=scalar expect_exit 0 "^isa: scalar" --version
expect_exit 1 "dataset-fashion-mnist" train --config "$src/configs/fmnist-mlp.toml" --set data.path="$tmp/nowhere" --set run.data_dir="$tmp/cache"

expect_exit 0 "done: test_accuracy" train --config "$src/configs/fmnist-mlp.toml" --set data.dataset=synthetic \
  --set run.epochs=1 --set run.out_dir="$tmp/results" --set run.name=e2e --set run.target_accuracy=0.5 --summary "$tmp/s.json"
for key in run mode peers learners_per_peer intra_sync sync_every autotune_log epochs samples wall_seconds samples_per_second train_loss \
           test_accuracy target_accuracy time_to_target_seconds bytes_sent bytes_received model_checksum \
           partition label_counts; do
  grep -q "\"$key\":" "$tmp/s.json" || fail "summary lacks $key"
done
[ "$(wc -l <"$tmp/results/e2e.metrics.csv")" -ge 2 ] || fail "metrics CSV has no rows"
# The default backend, "auto", times both at start and says which it kept and by how much.
expect_exit 0 "backend auto: " train --config "$src/configs/fmnist-mlp.toml" --set data.dataset=synthetic --set kernels.backend=auto \
  --set run.epochs=1 --set run.out_dir="$tmp/results" --set run.name=auto --summary "$tmp/auto.json"
grep -Eq "backend auto: (native [0-9.]+x onednn|onednn [0-9.]+x native|native \(this build has no oneDNN)" "$tmp/out" ||
  fail "the log does not say which backend auto chose and by how much"
grep -Eq '"backend": ?"(native|onednn)"' "$tmp/auto.json" || fail "summary does not name the backend auto chose"
expect_exit 2 "kernels.backend" train --config "$src/configs/fmnist-mlp.toml" --set kernels.backend=fastest
echo "cli end-to-end: ok"
