#!/bin/sh
# Runs the three all-reduce benchmarks on loopback, interleaved, and prints one table:
# Starling's ring (bench_allreduce), Gloo via torch.distributed, and Open MPI over TCP
# (btl tcp,self: the same loopback path; shared memory would measure something else).
# The machine may be shared and noisy, so each round runs Starling, Gloo and MPI once, one
# after the other, for every peer count, and the table gives each one's median over the
# rounds (each run itself reports a median over its repetitions) and the ratios of those
# medians; the spread column is Starling/Gloo's lowest and highest per-round ratio.
# Usage: [ISA=avx2] [BASELINE=OTHER_BUILD_DIR] run.sh [BUILD_DIR] [PEERS] [MIN_BYTES] [MAX_BYTES] [ROUNDS]
#   BUILD_DIR defaults to build-gossip at the repository root; bench_allreduce must be built.
#   BASELINE adds another build's bench_allreduce (e.g. of an earlier commit) to each round,
#   as the columns `base` and `st/base`.
#   ISA (scalar, avx2 or avx512) caps every party, for a like-for-like comparison on a host
#   with a wider ISA: Starling through STARLING_ISA (which BASELINE builds read too), ATen through
#   ATEN_CPU_CAPABILITY (Gloo's own sum is compiled in), Open MPI's reductions through
#   op_avx_support. The table's last lines say which ISA each party ran.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build-gossip}
peers=${2:-2,4}
min=${3:-1024}
max=${4:-67108864}
rounds=${5:-5}
baseline=${BASELINE:-}
isa=${ISA:-}
out=$(mktemp -d)

gloo_isa=""
if [ -n "$isa" ]; then
  export STARLING_ISA="$isa"
  gloo_isa="--isa $isa"
  case "$isa" in  # Open MPI's op/avx flags: SSE..SSE4.1 0xf, AVX 0x10, AVX2 0x20
    scalar) export OMPI_MCA_op_avx_support=0x3 ;;
    avx2) export OMPI_MCA_op_avx_support=0x3f ;;
  esac
fi

# The MPI column needs Open MPI's compiler wrapper, its header and mpirun: `make demo` brings
# openmpi-bin (wrapper and mpirun) but not libopenmpi-dev (mpi.h), which only the benchmarks
# need. Without them the column is skipped, saying how to get it, and the rest still runs.
mpi=no
mpi_skipped=""
if ! command -v mpicxx >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
  mpi_skipped="no mpicxx or mpirun"
elif ! printf '#include <mpi.h>\n' | mpicxx -E -x c++ - >/dev/null 2>&1; then
  mpi_skipped="no mpi.h"
else
  "$here/build_mpi.sh" "$out"
  mpi=yes
fi
if [ -n "$mpi_skipped" ]; then
  echo "allreduce: skipping the Open MPI column ($mpi_skipped); \`make bench-deps\` installs Open MPI's headers and tools" >&2
fi
for r in $(seq "$rounds"); do
  for p in $(echo "$peers" | tr ',' ' '); do
    echo "round $r/$rounds, $p peers" >&2
    "$build/bench/allreduce/bench_allreduce" --peers "$p" --min-bytes "$min" --max-bytes "$max" \
      --json "$out/starling_${r}_$p.json" >/dev/null
    [ -n "$baseline" ] && "$baseline/bench/allreduce/bench_allreduce" --peers "$p" --min-bytes "$min" \
      --max-bytes "$max" --json "$out/base_${r}_$p.json" >/dev/null
    # shellcheck disable=SC2086 # the ISA option is two words or nothing
    /usr/bin/python3 "$here/gloo_allreduce.py" --peers "$p" --min-bytes "$min" --max-bytes "$max" $gloo_isa \
      --json "$out/gloo_${r}_$p.json" >/dev/null
    [ "$mpi" = yes ] && mpirun --allow-run-as-root --oversubscribe --mca btl tcp,self -np "$p" \
      "$out/mpi_allreduce" --min-bytes "$min" --max-bytes "$max" --json "$out/mpi_${r}_$p.json" >/dev/null
  done
done

mpi_isa="skipped ($mpi_skipped; make bench-deps)"
[ "$mpi" = yes ] && mpi_isa="op/avx $(ompi_info --param op avx --level 9 --parsable 2>/dev/null |
  sed -n 's/^mca:op:avx:param:op_avx_support:value://p')"

/usr/bin/python3 - "$out" "$mpi_isa" <<'PY'
import glob, json, re, statistics, sys
out, mpi_isa = sys.argv[1], sys.argv[2]
def load(name):
    """{(peers, bytes): {round: busbw}}"""
    rows = {}
    for path in glob.glob(f"{out}/{name}_*.json"):
        rnd = int(re.search(rf"{name}_(\d+)_", path).group(1))
        for r in json.load(open(path)):
            rows.setdefault((r["peers"], r["bytes"]), {})[rnd] = r["busbw_gbps"]
    return rows
starling, gloo, mpi, base = load("starling"), load("gloo"), load("mpi"), load("base")
def med(rows, key):
    return statistics.median(rows[key].values()) if key in rows else None
def cell(v):
    return f"{v:9.3f}" if v is not None else f"{'-':>9}"
def ratio(a, b):
    return f"{a / b:8.2f}x" if a is not None and b else f"{'-':>9}"
def spread(key):
    both = [starling[key][r] / gloo[key][r] for r in starling.get(key, {}) if gloo.get(key, {}).get(r)]
    return f"{min(both):5.2f}-{max(both):.2f}x" if both else "-"
print()
print("bus bandwidth, GB/s (busbw = algbw * 2(p-1)/p); medians over rounds, interleaved")
extra = f" {'base':>9} {'st/base':>9}" if base else ""
print(f"{'peers':>5} {'bytes':>10} {'starling':>9} {'gloo':>9} {'mpi_tcp':>9} {'st/gloo':>9} {'mpi/gloo':>9} {'st/gloo per round':>18}{extra}")
for key in sorted(starling):
    s, g, m, b = med(starling, key), med(gloo, key), med(mpi, key), med(base, key)
    more = f" {cell(b)} {ratio(s, b)}" if base else ""
    print(f"{key[0]:5d} {key[1]:10d} {cell(s)} {cell(g)} {cell(m)} {ratio(s, g)} {ratio(m, g)} {spread(key):>18}{more}")
def isas(name):
    return ", ".join(sorted({r.get("isa", "?") for p in glob.glob(f"{out}/{name}_*.json") for r in json.load(open(p))}))
print(f"isa: starling {isas('starling')}; gloo {isas('gloo')}; mpi {mpi_isa}")
PY
echo "raw results: $out"
