#!/usr/bin/env bash
# job/check_boundary.sh passes a tree that keeps its rules and fails each kind of breach:
# a gossip/ include in cli/, a kind tested by name outside the registry, and more than 6.
#   tests/job/check_boundary_selftest.sh SOURCE_DIR
set -euo pipefail
check="$1/job/check_boundary.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fresh() {  # a tree that keeps the rules
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree/cli" "$tmp/tree/actors" "$tmp/tree/gossip" "$tmp/tree/job"
  printf '#include "job/task_kind.h"\n// data.dataset == "text" in a comment is no test\n' >"$tmp/tree/cli/command.cpp"
  printf 'bool text(const D& d) { return d.dataset == "text"; }\n' >"$tmp/tree/job/task_kind.cpp"
  printf '#include "gossip/topology/topology.h"\n' >"$tmp/tree/job/peer_graph.cpp"
}

expect() {  # expect PASS|FAIL WHAT
  local got=PASS
  bash "$check" "$tmp/tree" 2>"$tmp/err" || got=FAIL
  if [ "$got" != "$1" ]; then
    echo "selftest: $2: expected $1, got $got" >&2
    cat "$tmp/err" >&2
    exit 1
  fi
  echo "ok: $2 ($got)"
}

fresh
expect PASS "a tree that keeps the rules"

fresh
printf '#include "gossip/transport/transport_context.h"\n' >>"$tmp/tree/cli/command.cpp"
expect FAIL "cli/ includes a gossip/ header"

fresh
printf 'bool gpt(const M& m) { return m.kind == kGptKind; }\n' >"$tmp/tree/actors/node.cpp"
expect FAIL "actors/ tests the model kind by name"

fresh
printf 'bool lm(const M& m) { return is_language_model(m); }\n' >"$tmp/tree/job/data_source.cpp"
expect FAIL "job/ outside the registry tests the kind by name"

fresh
for i in 1 2 3 4 5 6; do printf 'bool t%d(const D& d) { return "text" == d.dataset; }\n' "$i"; done >>"$tmp/tree/job/task_kind.cpp"
expect FAIL "7 tests in the registry"

echo "check_boundary.sh: every case as expected"
