#!/usr/bin/env bash
# actors/check_rooms.sh passes the tree as it is and fails an include from a layer above, a
# file in no layer and an include from above actors/, naming it, in a copy of actors/ with
# one line added.
#   check_rooms_selftest.sh SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../rooms_selftest.sh"
rooms_selftest "$1" actors/check_rooms.sh actors

case_ actors/node_report.h '' ''
case_ actors/node_report.h '#include "actors/node_actor.h"' \
  'actors/node_report.h:33: layer state includes actors/node_actor.h (layer actor)'
case_ actors/node_spec.h '#include "actors/learner_actor.h"' 'layer spec includes actors/learner_actor.h'
case_ actors/learner_actor.cpp '#include "actors/node_state.h"' 'layer parts includes actors/node_state.h'
case_ actors/node_actor.cpp '#include "actors/node.h"' 'layer actor includes actors/node.h'
case_ actors/node.cpp '#include "actors/node_actor.h"' ''
case_ actors/node_state.h '#include "actors/node_schedule.h"' ''
case_ actors/stray.cpp '#include "actors/node_spec.h"' 'actors/stray.cpp:1: not in actors/check_rooms.sh'
case_ actors/node.cpp '#include "cli/config.h"' 'actors/ includes a folder above it'
echo "check_rooms selftest: all cases behave"
