#!/usr/bin/env bash
# Builds the protocols libFuzzer targets with clang (-fsanitize=fuzzer,address) into
# BUILD_DIR; with SECONDS, then fuzzes each target that long, starting from the committed
# seed corpus (new inputs go to BUILD_DIR/corpus/<target>, the committed corpus is read only).
# Usage: tests/protocols/fuzz/build.sh BUILD_DIR [SECONDS]
set -euo pipefail
build_dir=${1:?usage: build.sh BUILD_DIR [SECONDS]}
seconds=${2:-}
root=$(cd "$(dirname "$0")/../../.." && pwd)
cxx=${CXX_FUZZ:-/usr/bin/clang++}
if ! command -v "$cxx" >/dev/null; then
  echo "build.sh: $cxx not found; skipping the libFuzzer build" >&2
  exit 0
fi
mkdir -p "$build_dir/obj"
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -ffp-contract=off -fsanitize=fuzzer-no-link,address -I"$root")

# Per-file ISA flags, as in protocols/CMakeLists.txt.
isa_flags() {
  case "$1" in
    */crc32c_sse42.cpp) echo "-msse4.2" ;;
    */kernels_avx2.cpp) echo "-mavx2 -mfma -mf16c -mpopcnt" ;;
    */kernels_avx512.cpp) echo "-mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma -mf16c -mpopcnt" ;;
  esac
}

objects=()
for src in "$root"/protocols/*.cpp "$root"/protocols/codecs/*.cpp "$root"/protocols/simd/*.cpp \
           "$root"/kernels/cpu_features.cpp; do
  obj="$build_dir/obj/$(echo "${src#$root/}" | tr / _).o"
  # shellcheck disable=SC2046
  "$cxx" "${flags[@]}" $(isa_flags "$src") -c "$src" -o "$obj"
  objects+=("$obj")
done

targets=(frame membership codec_none codec_fp16 codec_bf16 codec_threshold codec_topk codec_qsgd codec_sign codec_powersgd)
for t in "${targets[@]}"; do
  "$cxx" "${flags[@]}" -fsanitize=fuzzer,address "$root/tests/protocols/fuzz/fuzz_$t.cpp" "${objects[@]}" \
    -o "$build_dir/fuzz_$t"
done
echo "built ${#targets[@]} fuzz targets in $build_dir"

if [[ -n "$seconds" ]]; then
  for t in "${targets[@]}"; do
    mkdir -p "$build_dir/corpus/$t"
    "$build_dir/fuzz_$t" -max_total_time="$seconds" -print_final_stats=1 \
      "$build_dir/corpus/$t" "$root/tests/protocols/fuzz/corpus/$t"
  done
fi
