#!/usr/bin/env bash
# gossip/'s rooms include only downward, and ZeroMQ stays in the transport's zmq/ room.
#   gossip/check_rooms.sh SOURCE_DIR    exits 1, naming each offending line
# Rules (a file may include, of gossip/, only these rooms):
#   topology/            topology/
#   transport/           transport/    (the interface: nothing of its links)
#   transport/memory/    transport/, transport/memory/
#   transport/zmq/       transport/, transport/zmq/
#   zmq/'s public headers (zmq_link.h, curve_pairs.h)      transport/
#   transport/transport_context.cpp (the choice of link)   transport/, transport/memory/,
#                                                          zmq/'s public headers
#   control/             transport/, control/
#   algorithms/          transport/, topology/, algorithms/
#   the hall (gossip/*.h, *.cpp)   every room, but of transport/zmq/ its public headers only
# Outside gossip/ nothing includes transport/zmq/ but its public headers; only zmq/'s other
# files include <zmq.h>/<zmq.hpp>, but for three tools that speak raw ZeroMQ on purpose
# (malformed frames); and of gossip/'s CMakeLists.txt files only zmq/'s links cppzmq.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../cmake/rooms.sh"
cd "$1"
status=0
fail() { echo "$1" >&2; status=1; }

zmq_public='gossip/transport/zmq/(zmq_link|curve_pairs)\.h'

room_of() {  # sets room: gossip/<room>/... -> room; a file at gossip/ top -> hall
  if [[ "$1" =~ ^${zmq_public}$ ]]; then room=transport/zmq/public; return; fi
  case "$1" in
    gossip/transport/zmq/*) room=transport/zmq ;;
    gossip/transport/memory/*) room=transport/memory ;;
    gossip/transport/transport_context.cpp) room=transport/choice ;;
    gossip/*/*) room=${1#gossip/}; room=${room%%/*} ;;
    *) room=hall ;;
  esac
}

allowed_rooms() {  # sets allowed: the rooms room $1 may include
  case "$1" in
    topology) allowed="topology" ;;
    transport | transport/zmq/public) allowed="transport" ;;
    transport/memory) allowed="transport transport/memory" ;;
    transport/zmq) allowed="transport transport/zmq transport/zmq/public" ;;
    transport/choice) allowed="transport transport/memory transport/zmq/public" ;;
    control) allowed="transport control" ;;
    algorithms) allowed="transport topology algorithms" ;;
    hall) allowed="transport transport/memory transport/zmq/public topology control algorithms hall" ;;
  esac
}

check_room_includes gossip

folders=()
for dir in platform kernels learners protocols simulator actors job cli examples bench tests; do
  [ -d "$dir" ] && folders+=("$dir")
done
sources=(--include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc')
if hits=$(grep -rnE "${sources[@]}" '#[[:space:]]*include[[:space:]]*"gossip/transport/zmq/' \
    "${folders[@]}" | grep -vE "\"${zmq_public}\"" | grep .); then
  fail "a transport-private header (gossip/transport/zmq/) included outside gossip/:"$'\n'"$hits"
fi
exceptions='^(tests/gossip/transport_test\.cpp|tests/gossip/relay_test\.cpp|tests/tools/flood_peer\.cpp):'
if hits=$(grep -rnE "${sources[@]}" '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]zmq(\.h|\.hpp|_addon\.hpp)[>"]' \
    gossip "${folders[@]}" | grep -Ev "^gossip/transport/zmq/" | grep -vE "$exceptions" | grep .); then
  fail "ZeroMQ included outside gossip/transport/zmq/:"$'\n'"$hits"
fi
if hits=$(grep -rnE "${sources[@]}" '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]zmq' \
    gossip/transport/zmq | grep -E "^${zmq_public}:" | grep .); then
  fail "a public header of gossip/transport/zmq/ includes ZeroMQ:"$'\n'"$hits"
fi
if hits=$(grep -rn --include=CMakeLists.txt cppzmq gossip | grep -v '^gossip/transport/zmq/CMakeLists.txt:' | grep .); then
  fail "cppzmq linked outside gossip/transport/zmq/:"$'\n'"$hits"
fi
exit $status
