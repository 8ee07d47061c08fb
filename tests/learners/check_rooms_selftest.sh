#!/usr/bin/env bash
# learners/check_rooms.sh passes the tree as it is and fails each kind of wrong-way include, a
# file outside the rooms, an include from above learners/ and an upward CMake link, naming
# it, in a copy of learners/ with one line added.
#   check_rooms_selftest.sh SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../rooms_selftest.sh"
rooms_selftest "$1" learners/check_rooms.sh learners

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
