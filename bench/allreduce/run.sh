#!/bin/sh
# Runs the three all-reduce benchmarks on loopback and prints one table side by side:
# Starling's ring (bench_allreduce), Gloo via torch.distributed, and Open MPI over TCP
# (btl tcp,self: the same loopback path; shared memory would measure something else).
# Usage: run.sh [BUILD_DIR] [PEERS] [MIN_BYTES] [MAX_BYTES]
#   BUILD_DIR defaults to build-gossip at the repository root; bench_allreduce must be built.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build-gossip}
peers=${2:-2,4}
min=${3:-1024}
max=${4:-67108864}
out=$(mktemp -d)

"$build/bench/allreduce/bench_allreduce" --peers "$peers" --min-bytes "$min" --max-bytes "$max" \
  --json "$out/starling.json"
/usr/bin/python3 "$here/gloo_allreduce.py" --peers "$peers" --min-bytes "$min" --max-bytes "$max" \
  --json "$out/gloo.json"
if command -v mpicxx >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then
  "$here/build_mpi.sh" "$out"
  for p in $(echo "$peers" | tr ',' ' '); do
    mpirun --allow-run-as-root --oversubscribe --mca btl tcp,self -np "$p" "$out/mpi_allreduce" \
      --min-bytes "$min" --max-bytes "$max" --json "$out/mpi_$p.json"
  done
fi

/usr/bin/python3 - "$out" <<'PY'
import glob, json, sys
out = sys.argv[1]
def load(pattern):
    rows = {}
    for path in glob.glob(f"{out}/{pattern}"):
        for r in json.load(open(path)):
            rows[(r["peers"], r["bytes"])] = r["busbw_gbps"]
    return rows
starling, gloo, mpi = load("starling.json"), load("gloo.json"), load("mpi_*.json")
def cell(v):
    return f"{v:9.3f}" if v is not None else f"{'-':>9}"
def ratio(a, b):
    return f"{a / b:8.2f}x" if a is not None and b else f"{'-':>9}"
print()
print("bus bandwidth, GB/s (busbw = algbw * 2(p-1)/p)")
print(f"{'peers':>5} {'bytes':>10} {'starling':>9} {'gloo':>9} {'mpi_tcp':>9} {'st/gloo':>9} {'mpi/gloo':>9}")
for key in sorted(starling):
    s, g, m = starling.get(key), gloo.get(key), mpi.get(key)
    print(f"{key[0]:5d} {key[1]:10d} {cell(s)} {cell(g)} {cell(m)} {ratio(s, g)} {ratio(m, g)}")
PY
echo "raw results: $out"
