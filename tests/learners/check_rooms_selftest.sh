#!/usr/bin/env bash
# learners/check_rooms.sh passes the tree as it is and fails each kind of wrong-way include, a
# file outside the rooms, an include from above learners/ and an upward CMake link, naming
# it, in a copy of learners/ with one line added.
#   check_rooms_selftest.sh SOURCE_DIR
set -euo pipefail
root=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_rooms selftest: $*" >&2; exit 1; }

# case FILE LINE EXPECTED: adds LINE to FILE (in a fresh copy of learners/); the check must
# fail with EXPECTED in its output (EXPECTED empty: the check must pass).
case_() {
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree"
  cp -r "$root/learners" "$tmp/tree/"
  echo "$2" >>"$tmp/tree/$1"
  if out=$(bash "$root/learners/check_rooms.sh" "$tmp/tree" 2>&1); then
    [ -z "$3" ] || fail "$1 + '$2' passed; expected: $3"
  else
    [ -n "$3" ] || fail "$1 + '$2' failed: $out"
    grep -qF -- "$3" <<<"$out" || fail "$1 + '$2': expected '$3' in: $out"
  fi
}

case_ learners/models/model.cpp '' ''
case_ learners/models/model.cpp '#include "learners/checkpoints/checkpoint.h"' \
  'learners/models/model.cpp:'
case_ learners/models/model.cpp '#include "learners/checkpoints/checkpoint.h"' \
  'room models includes learners/checkpoints/checkpoint.h (room checkpoints)'
case_ learners/layers/dense.h '#include "learners/data/dataset.h"' 'room models includes learners/data/dataset.h'
case_ learners/layer_rows/dense.cpp '#include "learners/tasks/loss.h"' 'room models includes'
case_ learners/checkpoints/crc32.h '#include "learners/models/layer.h"' 'room checkpoints includes'
case_ learners/optimizers/optimizer.h '#include "learners/data/sampler.h"' 'room optimizers includes'
case_ learners/data/sampler.h '#include "learners/optimizers/schedule.h"' 'room data includes'
case_ learners/data/sampler.h '#include "learners/models/layer.h"' ''
case_ learners/tasks/task.h '#include "learners/replicas/sma.h"' 'room tasks includes'
case_ learners/replicas/sma.cpp '#include "learners/tasks/task.h"' ''
case_ learners/replicas/sma.cpp '#include "actors/node_spec.h"' 'learners/ includes a folder above it'
case_ learners/replicas/sma.cpp '#include "kernels/ops.h"' ''
case_ learners/stray.h '#pragma once' 'files in learners/ outside its rooms'
case_ learners/CMakeLists.txt 'learners_room(stray SOURCES x.cpp LINKS PUBLIC starling_learners_models)' \
  'room stray links room models'
case_ learners/CMakeLists.txt 'learners_room(data SOURCES x.cpp LINKS PUBLIC starling_learners_tasks)' \
  'room data links room tasks'
echo "check_rooms selftest: all cases behave"
