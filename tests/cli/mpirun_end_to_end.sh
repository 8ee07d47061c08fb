#!/usr/bin/env bash
# The Open MPI recipe for real: `mpirun -np 2 starling peer --config C` starts two peers that
# take their rank from OMPI_COMM_WORLD_RANK, train together and both write their summary.
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
echo "mpirun end-to-end: ok"
