# Sourced by the CLI tests: fail MESSAGE, and expect_exit CODE PATTERN ARGS... which runs
# "$starling" ARGS and checks its exit code and that its output contains PATTERN.
# Needs $starling and $tmp.
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_exit() {
  local want=$1 pattern=$2; shift 2
  set +e
  "$starling" "$@" >"$tmp/out" 2>&1
  local got=$?
  set -e
  [ "$got" -eq "$want" ] || { cat "$tmp/out"; fail "exit $got, expected $want for: $*"; }
  grep -q -- "$pattern" "$tmp/out" || { cat "$tmp/out"; fail "output lacks '$pattern' for: $*"; }
}
