#!/bin/sh
# Builds mpi_allreduce with the MPI compiler wrapper (kept out of the main CMake build so
# that the project does not depend on MPI). Usage: build_mpi.sh OUTPUT_DIR
set -eu
out=${1:-.}
mkdir -p "$out"
mpicxx -std=c++17 -O3 -DOMPI_SKIP_MPICXX -Wall -Wextra -o "$out/mpi_allreduce" "$(dirname "$0")/mpi_allreduce.cpp"
