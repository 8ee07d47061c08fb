#!/usr/bin/env bash
# Installs the Debian packages Starling needs, and only those that are missing.
# Idempotent and quiet when everything is there; runs apt-get update only before an install.
#   scripts/deps.sh          what the build, `make demo` and every test need
#   scripts/deps.sh bench    also what only the benchmarks need
#   scripts/deps.sh arm64    also the cross toolchain, qemu and the arm64 libraries (multiarch)
#                            that `make arm64` builds and tests with (scripts/arm64.sh)
set -euo pipefail

# ocl-icd-opencl-dev: Debian's oneDNN CMake config insists on finding OpenCL.
build=(cmake make g++ pkg-config zlib1g-dev libcaf-dev libzmq3-dev libsodium-dev cppzmq-dev libeigen3-dev
       libdnnl-dev ocl-icd-opencl-dev libboost-test-dev libtomlplusplus-dev libcli11-dev libspdlog-dev nlohmann-json3-dev
       libopenblas-dev dataset-fashion-mnist iproute2 libsentencepiece-dev prometheus-cpp-dev)
# The demo's PyTorch DDP variant, the experiment's plots and the simulator's calibration
# script (python3-*); `mpirun` for the Open MPI recipe's test; clang with its libFuzzer
# runtime for the fuzz targets, which the suite builds and runs briefly; Slurm's controller
# and node daemon with munge, which the Slurm test starts as a one-node cluster on this host;
# fortunes, the shipped text corpus of the language models (/usr/share/games/fortunes);
# SentencePiece's command-line tools and Python module, the subword tokenizer's other side;
# the monitor's tests parse /metrics with prometheus_client, open the live page in Chromium
# and fetch with curl; the swarm's namespace test (and scripts/netns.sh --nat) builds its NAT
# routers with nftables.
run=(python3 python3-torch python3-matplotlib python3-numpy openmpi-bin clang libclang-rt-14-dev
     slurmctld slurmd slurm-client munge fortunes sentencepiece python3-sentencepiece python3-prometheus-client chromium
     curl nftables)
# The MPI all-reduce benchmark compiles against Open MPI.
bench=(libopenmpi-dev)
# The arm64 libraries beside the host's (Eigen and CLI11 are headers, from `build`). Four do
# not install beside their amd64 packages, so scripts/arm64.sh unpacks them into its build
# folder instead: CAF and SentencePiece (not multiarch), oneDNN's headers (dnnl_config.h
# differs per architecture; its library, libdnnl2, installs), and the monitor's prometheus-cpp,
# whose development package depends on civetweb's server executable (not multiarch; civetweb's
# CMake config also checks that it exists). prometheus-cpp's CMake config asks for curl, which
# nothing links, so curl's development files are unpacked there too rather than installing
# libcurl4:arm64 and its dependencies. ocl-icd-opencl-dev: as in `build`.
arm64=(g++-aarch64-linux-gnu qemu-user-static libzmq3-dev:arm64 cppzmq-dev:arm64 libdnnl2:arm64
       ocl-icd-opencl-dev:arm64 libboost-test-dev:arm64 libtomlplusplus-dev:arm64 libspdlog-dev:arm64
       zlib1g-dev:arm64)

wanted=("${build[@]}" "${run[@]}")
[ "${1:-}" = bench ] && wanted+=("${bench[@]}")
[ "${1:-}" = arm64 ] && wanted+=("${arm64[@]}")

missing=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
if [ "${1:-}" = arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
fi
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
