#!/usr/bin/env bash
# actors/'s files include only their own layer and the layers below it; actors/ stays flat,
# and this list is its order.
#   actors/check_rooms.sh SOURCE_DIR    exits 1, naming each offending line
# Layers, bottom to top (a file is in the layer of its name, .h and .cpp alike; a file may
# include its own layer and those below):
#   1 spec      node_spec, messages, exchange_section: what a node is asked and answers, the
#               messages between its actors, the exchange's checkpoint section
#   2 parts     learner_actor, metrics_actor, learner_cost, learner_tuner, backend_choice,
#               node_schedule: the actors beside the node and what the node plans with
#   3 state     node_state, node_exchange, node_checkpoint, node_report: the node actor's
#               state and the plain functions on it
#   4 actor     node_actor: the node actor's behaviour
#   5 node      node: the CAF-free entry point that cli/ calls
# A file of actors/ not in this list fails, so a new file takes its place here. actors/
# includes nothing of the folders above it (cli/, monitor/, simulator/, bench/, examples/,
# tests/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cmake/rooms.sh"
cd "$1"
status=0
fail() { echo "$1" >&2; status=1; }

layers="spec parts state actor node"  # bottom to top

room_of() {  # sets room: the layer of actors/<stem>.h|.cpp; "unlisted" for a file in none
  local stem=${1#actors/}
  stem=${stem%.*}
  case "$stem" in
    node_spec | messages | exchange_section) room=spec ;;
    learner_actor | metrics_actor | learner_cost | learner_tuner | backend_choice | node_schedule) room=parts ;;
    node_state | node_exchange | node_checkpoint | node_report) room=state ;;
    node_actor) room=actor ;;
    node) room=node ;;
    *) room=unlisted ;;
  esac
}

allowed_rooms() {  # sets allowed: layer $1 and the layers below it (an unlisted file fails below)
  allowed=""
  local layer
  for layer in $layers; do
    allowed+=" $layer"
    [ "$layer" != "$1" ] || return 0
  done
}

for file in $(find actors -type f \( -name '*.h' -o -name '*.cpp' \) | sort); do
  room_of "$file"
  [ "$room" != unlisted ] || fail "$file:1: not in actors/check_rooms.sh's layers: give it one"
done

check_room_includes actors layer

if hits=$(grep -rnE --include='*.h' --include='*.cpp' \
    '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(cli|monitor|simulator|bench|examples|tests)/' actors | grep .); then
  fail "actors/ includes a folder above it:"$'\n'"$hits"
fi
exit $status
