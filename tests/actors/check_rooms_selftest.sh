#!/usr/bin/env bash
# actors/check_rooms.sh passes the tree as it is and fails an include from a layer above, a
# file in no layer and an include from above actors/, naming it, in a copy of actors/ with
# one line added.
#   check_rooms_selftest.sh SOURCE_DIR
set -euo pipefail
root=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_rooms selftest: $*" >&2; exit 1; }

# case FILE LINE EXPECTED: adds LINE to FILE (in a fresh copy of actors/); the check must
# fail with EXPECTED in its output (EXPECTED empty: the check must pass).
case_() {
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree"
  cp -r "$root/actors" "$tmp/tree/"
  echo "$2" >>"$tmp/tree/$1"
  if out=$(bash "$root/actors/check_rooms.sh" "$tmp/tree" 2>&1); then
    [ -z "$3" ] || fail "$1 + '$2' passed; expected: $3"
  else
    [ -n "$3" ] || fail "$1 + '$2' failed: $out"
    grep -qF -- "$3" <<<"$out" || fail "$1 + '$2': expected '$3' in: $out"
  fi
}

case_ actors/node_report.h '' ''
case_ actors/node_report.h '#include "actors/node_actor.h"' \
  'actors/node_report.h:33: layer state includes actors/node_actor.h (layer actor, above it)'
case_ actors/node_spec.h '#include "actors/learner_actor.h"' 'layer spec includes actors/learner_actor.h'
case_ actors/learner_actor.cpp '#include "actors/node_state.h"' 'layer parts includes actors/node_state.h'
case_ actors/node_actor.cpp '#include "actors/node.h"' 'layer actor includes actors/node.h'
case_ actors/node.cpp '#include "actors/node_actor.h"' ''
case_ actors/node_state.h '#include "actors/node_schedule.h"' ''
case_ actors/stray.cpp '#include "actors/node_spec.h"' 'actors/stray.cpp:1: not in actors/check_rooms.sh'
case_ actors/node.cpp '#include "cli/config.h"' 'actors/ includes a folder above it'
echo "check_rooms selftest: all cases behave"
