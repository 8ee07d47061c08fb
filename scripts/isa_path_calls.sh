#!/usr/bin/env bash
# Proves that test suites ran one ISA's code and not a fallback: runs each suite under gdb
# with a counting breakpoint on every function whose symbol names the ISA
# (`direct_conv_avx512`) and on every entry of the dispatch tables so named
# (`kAttentionAvx512`: a struct of function pointers), then prints how often each entry
# point was entered, summed over the suites. Exits 1 if a suite fails or an entry point of
# the suites' binaries was never entered. ISA_EMULATOR runs the suites under an emulator's
# gdb stub (qemu-aarch64-static: arm64 suites on this host, through gdb-multiarch), which
# hangs on a suite's second thread: ISA_SUITE_ARGS (such as --run_test=!case) leaves
# threaded cases out.
#   scripts/isa_path_calls.sh avx512 build/tests/kernels/kernels_attention ...
#   ISA_EMULATOR=qemu-aarch64-static scripts/isa_path_calls.sh neon build-arm64/tests/...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 ISA TEST_BINARY..." >&2; exit 2; }
isa=$1; shift
emulator=${ISA_EMULATOR:-}
gdb=$([ -n "$emulator" ] && echo gdb-multiarch || echo gdb)
command -v "$gdb" >/dev/null || { echo "$0: needs $gdb" >&2; exit 2; }

# "T size name" for functions, "D size name" for tables of pointers, from Starling's
# symbols whose demangled name contains the ISA as `_avx512` or `Avx512`.
symbols_of() {
  nm -C -S --defined-only "$1" | awk -v pat="_${isa}|${isa^}" '
    { type = $(NF > 3 ? 3 : 2) }
    type ~ /^[TtDd]$/ {
      name = $0; sub(/^[0-9a-f]+ ([0-9a-f]+ )?[A-Za-z] /, "", name); sub(/\(.*$/, "", name)
      if (name ~ /^starling::/ && name ~ pat) print (type ~ /[Tt]/ ? "T" : "D"), (NF > 3 ? $2 : 0), name }'
}

script=$(mktemp --suffix=.py)
log=$(mktemp)
trap 'rm -f "$script" "$log"' EXIT
cat >"$script" <<'EOF'
import gdb, os

class Counter(gdb.Breakpoint):
    """Counts entries without stopping the program."""
    def __init__(self, location):
        super().__init__(location, internal=True)
        self.calls = 0
    def stop(self):
        self.calls += 1
        return False

gdb.execute("set pagination off")
# Out-of-line stepping over a breakpoint misplaces some EVEX instructions that address
# memory relative to the instruction pointer, so step over breakpoints in place.
gdb.execute("set displaced-stepping off")
gdb.execute("tbreak main")
if os.environ.get("ISA_REMOTE"):  # the emulator started the suite, stopped, with its output in the log
    gdb.execute("target remote " + os.environ["ISA_REMOTE"])
    gdb.execute("continue")
else:
    gdb.execute("run > %s 2>&1" % os.environ["ISA_SUITE_LOG"])
# Now past the dynamic loader, which relocates the tables.
entries, seen = [], set()
for line in os.environ["ISA_SYMBOLS"].splitlines():
    kind, size, name = line.split(" ", 2)
    if kind == "T":
        targets = [(name, "'%s'" % name)]
    else:
        base = int(gdb.parse_and_eval("(unsigned long)&'%s'" % name))
        slots = [int(gdb.parse_and_eval("*(unsigned long*)%d" % (base + 8 * i)))
                 for i in range(int(size, 16) // 8)]
        targets = [("%s[%d]" % (name, i), "*%d" % p) for i, p in enumerate(slots) if p]
    for label, location in targets:
        if location not in seen:
            seen.add(location)
            entries.append((label, Counter(location)))
gdb.execute("continue")
for label, bp in entries:
    print("calls %d %s" % (bp.calls, label))
print("exit %s" % gdb.parse_and_eval("$_exitcode"))
EOF

declare -A calls
failed=0
for binary in "$@"; do
  symbols=$(symbols_of "$binary")
  [ -n "$symbols" ] || { echo "$binary: no symbol names $isa" >&2; failed=1; continue; }
  remote=""
  if [ -n "$emulator" ]; then
    port=$((20000 + RANDOM % 20000))
    # shellcheck disable=SC2086
    "$emulator" -g "$port" "$binary" ${ISA_SUITE_ARGS:-} >"$log" 2>&1 &
    remote=":$port"
    sleep 1
  fi
  out=$(ISA_REMOTE="$remote" ISA_SUITE_LOG="$log" ISA_SYMBOLS="$symbols" "$gdb" --batch -nx -x "$script" --args "$binary" ${ISA_SUITE_ARGS:-} 2>&1) || true
  wait
  status=$(echo "$out" | sed -n 's/^exit //p')
  echo "$(basename "$binary"): exit status ${status:-unknown}"
  [ "$status" = 0 ] || { failed=1; tail -n 40 "$log"; }
  while read -r _ n label; do
    calls[$label]=$(( ${calls[$label]:-0} + n ))
  done < <(echo "$out" | grep '^calls ')
done
never=0
for label in $(printf '%s\n' "${!calls[@]}" | sort); do
  printf '%10d  %s\n' "${calls[$label]}" "$label"
  [ "${calls[$label]}" -gt 0 ] || never=$((never + 1))
done
echo "entry points: ${#calls[@]}, never entered: $never"
[ $failed = 0 ] && [ $never = 0 ]
