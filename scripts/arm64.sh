#!/usr/bin/env bash
# `make arm64`: cross-builds Starling for 64-bit Arm Linux into BUILD (build-arm64/) and runs
# it under qemu-aarch64-static: the unit suites of kernels, learners, protocols, gossip and
# the monitor, one epoch of the MLP on Fashion-MNIST (test accuracy at least 0.80), 100 steps
# of a small GPT on fortunes (the training loss falls), and `starling --version` (names neon).
# Emulation checks correctness, not speed.
#   scripts/arm64.sh [BUILD] [extra cmake arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-arm64}
shift || true
jobs=${JOBS:-$(nproc)}
run="qemu-aarch64-static"

scripts/deps.sh arm64

# The arm64 packages that do not install beside the host's amd64 ones (scripts/deps.sh says
# why), unpacked from Debian's own .debs: CAF, oneDNN, SentencePiece, and the monitor's
# prometheus-cpp with civetweb (its server executable too, which civetweb's CMake config
# checks for), curl's development files (which prometheus-cpp's CMake config asks for), and
# libsodium (the swarm's invitations), whose .pc file pkg-config must find in the sysroot.
# The marker names the list, so that a sysroot unpacked for an older list is unpacked again.
sysroot=$build/sysroot
marker=$sysroot/done-caf-dnnl-sentencepiece-prometheus-civetweb-curl-sodium
if [ ! -e "$marker" ]; then
  rm -rf "$sysroot"
  mkdir -p "$sysroot/debs"
  (cd "$sysroot/debs" && apt-get download -qq libcaf-core0.17:arm64 libcaf-dev:arm64 libdnnl-dev:arm64 libdnnl2:arm64 \
    libsentencepiece-dev:arm64 libsentencepiece0:arm64 prometheus-cpp-dev:arm64 libprometheus-cpp-core1.0:arm64 \
    libprometheus-cpp-pull1.0:arm64 libprometheus-cpp-push1.0:arm64 libcivetweb-dev:arm64 libcivetweb1:arm64 \
    civetweb:arm64 libcurl4-openssl-dev:arm64 libcurl4:arm64 libsodium-dev:arm64 libsodium23:arm64 2>/dev/null)
  for deb in "$sysroot"/debs/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
  touch "$marker"
fi
# SentencePiece and libsodium are found through pkg-config: their arm64 .pc files, their paths
# under the sysroot.
export PKG_CONFIG_LIBDIR=$PWD/$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=$PWD/$sysroot

cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PWD/$sysroot/usr" "$@" >/dev/null

# The unit suites: every ctest entry of these folders but the fuzzers' replays and one
# bound in wall time (a death among 128 peers known within 3.3 s, which emulation misses by
# running slower, not wrongly), and the executable the end-to-end runs use.
suites='^(kernels_|learners_|protocols_(frame|codec)|test_gossip_|monitor_)'
timed='^test_gossip_death_notice$'
tests=$(ctest --test-dir "$build" -N -R "$suites" -E "$timed" | sed -n 's/^ *Test *#[0-9]*: //p')
# Of those, the ones built from sources (the room checks are scripts, with no target).
targets=$(cmake --build "$build" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
built=$(grep -Fxf <(echo "$targets") <(echo "$tests"))
# shellcheck disable=SC2086
cmake --build "$build" -j "$jobs" --target starling $built

ctest --test-dir "$build" -R "$suites" -E "$timed" -j "$jobs" --output-on-failure

out=$build/e2e
rm -rf "$out"
mkdir -p "$out"
version=$($run "$build/cli/starling" --version)
echo "$version"
grep -q '^isa: neon' <<<"$version" || { echo "arm64: --version does not name neon" >&2; exit 1; }

# One epoch of the shipped MLP; the summary's test accuracy must reach 0.80.
$run "$build/cli/starling" train --config configs/fmnist-mlp.toml --set run.epochs=1 \
  --set run.out_dir="$out" --set run.name=mlp --set run.target_accuracy=0.8 --summary "$out/mlp.json"
accuracy=$(sed -n 's/.*"test_accuracy": *\([0-9.]*\).*/\1/p' "$out/mlp.json")
echo "arm64: MLP test accuracy after one epoch: $accuracy"
awk -v a="$accuracy" 'BEGIN { exit !(a >= 0.80) }' || { echo "arm64: MLP below 0.80" >&2; exit 1; }

# 100 steps of the shipped GPT made small (2 blocks of width 64, context 32, 2 % of the text
# for validation), so that emulation runs it in minutes: the mean training loss of steps
# 51-100 must be below that of steps 1-50.
$run "$build/cli/starling" train --config configs/fortunes-gpt.toml --set run.steps=100 --set run.eval_steps=50 \
  --set data.validation_fraction=0.02 --set model.blocks=2 --set model.width=64 --set model.context=32 \
  --set run.checkpoint_every=0 --set run.out_dir="$out" --set run.name=gpt --summary "$out/gpt.json"
losses=$(awk -F, 'NR > 1 { printf "%s ", $6 }' "$out/gpt.metrics.csv")
echo "arm64: GPT training loss over steps 1-50 and 51-100: $losses"
awk -F, 'NR == 2 { first = $6 } NR > 2 { last = $6 } END { exit !(NR == 3 && last < first) }' "$out/gpt.metrics.csv" ||
  { echo "arm64: the GPT's loss did not fall" >&2; exit 1; }
echo "arm64: ok"
