#!/usr/bin/env bash
# Builds the protocols libFuzzer targets with clang (-fsanitize=fuzzer,address) into OUT_DIR
# and, with SECONDS, fuzzes each target that long, starting from the committed seed corpus
# (new inputs go to OUT_DIR/corpus/<target>; the committed corpus is read only).
# Each source's ISA flags (-m...) are read from CMAKE_BUILD_DIR/compile_commands.json, so
# protocols/CMakeLists.txt stays their one definition.
# Exit 77 (skipped) when clang or the compile database is missing.
# Usage: tests/protocols/fuzz/build.sh CMAKE_BUILD_DIR OUT_DIR [SECONDS]
set -euo pipefail
cmake_build=${1:?usage: build.sh CMAKE_BUILD_DIR OUT_DIR [SECONDS]}
out=${2:?usage: build.sh CMAKE_BUILD_DIR OUT_DIR [SECONDS]}
seconds=${3:-}
root=$(cd "$(dirname "$0")/../../.." && pwd)
cxx=${CXX_FUZZ:-/usr/bin/clang++}
db=$cmake_build/compile_commands.json
command -v "$cxx" >/dev/null || { echo "SKIP: $cxx not found (scripts/deps.sh installs clang)"; exit 77; }
[ -f "$db" ] || { echo "SKIP: no $db (configure with CMake first)"; exit 77; }

# "source<TAB>isa flags" for every file of the protocols and platform libraries.
sources=$(/usr/bin/python3 - "$db" "$root" "$(cd "$cmake_build" && pwd)" <<'EOF'
import json, shlex, sys
db, root, build = sys.argv[1], sys.argv[2], sys.argv[3]
for entry in json.load(open(db)):
    src = entry["file"]
    # The generated table of codec rows lives in the build folder's protocols/.
    if src.startswith((root + "/protocols/", root + "/platform/", build + "/protocols/")):
        flags = [f for f in shlex.split(entry["command"]) if f.startswith("-m")]
        print(src + "\t" + " ".join(flags))
EOF
)
[ -n "$sources" ] || { echo "build.sh: no protocols sources in $db" >&2; exit 1; }

mkdir -p "$out/obj"
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -ffp-contract=off -fsanitize=fuzzer-no-link,address -I"$root")
objects=()
while IFS=$'\t' read -r src isa; do
  obj="$out/obj/$(echo "${src#$root/}" | tr / _).o"
  rm -f "$obj"
  # shellcheck disable=SC2086
  "$cxx" "${flags[@]}" $isa -c "$src" -o "$obj" &
  objects+=("$obj")
  (( ${#objects[@]} % $(nproc) == 0 )) && wait
done <<<"$sources"
wait
for obj in "${objects[@]}"; do [ -f "$obj" ] || { echo "build.sh: $obj was not built" >&2; exit 1; }; done

targets=(frame membership codec)
for t in "${targets[@]}"; do
  "$cxx" "${flags[@]}" -fsanitize=fuzzer,address "$root/tests/protocols/fuzz/fuzz_$t.cpp" "${objects[@]}" \
    -o "$out/fuzz_$t"
done
echo "built ${#targets[@]} fuzz targets in $out"

if [[ -n "$seconds" ]]; then
  for t in "${targets[@]}"; do
    mkdir -p "$out/corpus/$t"
    "$out/fuzz_$t" -max_total_time="$seconds" -print_final_stats=1 \
      "$out/corpus/$t" "$root/tests/protocols/fuzz/corpus/$t"
  done
  echo "fuzzed ${#targets[@]} targets for $seconds s each: no crash"
fi
