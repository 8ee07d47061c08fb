#!/usr/bin/env bash
# `make bench`: every benchmark of bench/, each comparing Starling with its anchors side by
# side in one run (interleaved, ratios), one after another. Takes about half an hour on
# the 2-core machine; run one part alone with the commands below.
#   scripts/bench.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: scripts/bench.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
section() { printf '\n== %s\n' "$*"; }

section "kernels: native vs oneDNN vs OpenBLAS (bench_kernels)"
"$build/bench/kernels/bench_kernels"
section "ops (bench_ops)"
"$build/bench/kernels/bench_ops"
section "codecs (bench_codecs)"
"$build/bench/codecs/bench_codecs"
section "ring all-reduce vs Gloo and Open MPI (bench/allreduce/run.sh)"
bench/allreduce/run.sh "$build"
section "training throughput vs PyTorch, one thread (bench/compare_torch.py)"
/usr/bin/python3 bench/compare_torch.py --starling "$build/cli/starling"
section "learners per node (bench/learners/bench_learners.py throughput)"
/usr/bin/python3 bench/learners/bench_learners.py throughput --starling "$build/cli/starling"
