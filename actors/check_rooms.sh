#!/usr/bin/env bash
# actors/'s files include only their own layer and the layers below it; actors/ stays flat,
# and this list is its order.
#   actors/check_rooms.sh SOURCE_DIR    exits 1, naming each offending line
# Layers, bottom to top (a file is in the layer of its name, .h and .cpp alike):
#   1 spec      node_spec, messages, exchange_section: what a node is asked and answers, the
#               messages between its actors, the exchange's checkpoint section
#   2 parts     learner_actor, metrics_actor, learner_cost, learner_tuner, backend_choice,
#               node_schedule: the actors beside the node and what the node plans with
#   3 state     node_state, node_exchange, node_checkpoint, node_report: the node actor's
#               state and the plain functions on it
#   4 actor     node_actor: the node actor's behaviour
#   5 node      node: the CAF-free entry point that cli/ calls
# A file of actors/ not in this list fails, so a new file takes its place here. actors/
# includes nothing of cli/, monitor/ or simulator/, which lie above it.
set -euo pipefail
cd "$1"
status=0
fail() { echo "$1" >&2; status=1; }

layer_of() {  # sets layer (a number) and name for actors/<stem>.h|.cpp; layer 0: unlisted
  local stem=${1#actors/}
  stem=${stem%.*}
  case "$stem" in
    node_spec | messages | exchange_section) layer=1 name=spec ;;
    learner_actor | metrics_actor | learner_cost | learner_tuner | backend_choice | node_schedule) layer=2 name=parts ;;
    node_state | node_exchange | node_checkpoint | node_report) layer=3 name=state ;;
    node_actor) layer=4 name=actor ;;
    node) layer=5 name=node ;;
    *) layer=0 name=unlisted ;;
  esac
}

for file in $(find actors -type f \( -name '*.h' -o -name '*.cpp' \) | sort); do
  layer_of "$file"
  [ "$layer" -gt 0 ] || fail "$file:1: not in actors/check_rooms.sh's layers: give it one"
done

while IFS=: read -r file line text; do
  [[ "$text" =~ \"(actors/[^\"]+)\" ]] || continue
  target=${BASH_REMATCH[1]}
  layer_of "$file"
  from=$layer from_name=$name
  layer_of "$target"
  [ "$from" -eq 0 ] || [ "$layer" -le "$from" ] ||
    fail "$file:$line: layer $from_name includes $target (layer $name, above it)"
done < <(grep -rnE --include='*.h' --include='*.cpp' \
           '^[[:space:]]*#[[:space:]]*include[[:space:]]*"actors/[^"]+"' actors | sort -t: -k1,1 -k2,2n)

if hits=$(grep -rnE --include='*.h' --include='*.cpp' \
    '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(cli|monitor|simulator|bench|examples|tests)/' actors | grep .); then
  fail "actors/ includes a folder above it:"$'\n'"$hits"
fi
exit $status
