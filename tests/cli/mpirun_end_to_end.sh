#!/usr/bin/env bash
# The Open MPI recipe for real: `mpirun -np 2 starling peer --config C` starts two peers that
# take their rank from OMPI_COMM_WORLD_RANK, train together and both write their summary;
# then three ranks of a config with no [[peer]] list (launch.endpoints = "openmpi") do the same.
# Skipped (exit 77) when mpirun is not installed (scripts/deps.sh installs openmpi-bin).
set -euo pipefail
starling=$(realpath "$1")
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed (scripts/deps.sh installs openmpi-bin)"; exit 77; }
base=$((14000 + ($$ % 20000)))
source "$(dirname "$0")/peers_config.sh"

peers_config "$tmp/two.toml" allreduce $base $((base + 1))
# --allow-run-as-root: CI runs as root; --oversubscribe: two ranks on whatever cores there are.
timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 "$starling" peer --config "$tmp/two.toml" \
  --set run.epochs=1 >"$tmp/mpi.log" 2>&1 || { cat "$tmp/mpi.log"; fail "mpirun failed"; }
for id in 0 1; do
  [ -e "$tmp/out/e2e-peer$id.summary.json" ] || { cat "$tmp/mpi.log"; fail "rank $id wrote no summary"; }
done
a=$(grep '"model_checksum"' "$tmp/out/e2e-peer0.summary.json")
b=$(grep '"model_checksum"' "$tmp/out/e2e-peer1.summary.json")
[ "$a" = "$b" ] || fail "the two ranks ended with different models ($a vs $b)"

# The endpoints from mpirun's environment: rank r at 127.0.0.1:(base_port + r).
peers_config "$tmp/alloc.toml" allreduce
printf '[launch]\nendpoints = "openmpi"\nbase_port = %d\n' $((base + 2)) >>"$tmp/alloc.toml"
timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 "$starling" peer --config "$tmp/alloc.toml" \
  --set run.name=alloc --set run.epochs=1 >"$tmp/alloc.log" 2>&1 || { cat "$tmp/alloc.log"; fail "mpirun of 3 ranks failed"; }
grep -q "peer 2 of 3 from the openmpi allocation, at tcp://127.0.0.1:$((base + 4))" "$tmp/alloc.log" \
  || { cat "$tmp/alloc.log"; fail "rank 2 did not take the third port"; }
first=$(grep '"model_checksum"' "$tmp/out/alloc-peer0.summary.json")
for id in 1 2; do
  [ "$(grep '"model_checksum"' "$tmp/out/alloc-peer$id.summary.json")" = "$first" ] || fail "rank $id ended with another model"
done
echo "mpirun end-to-end: ok"
