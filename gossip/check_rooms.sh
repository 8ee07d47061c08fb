#!/usr/bin/env bash
# gossip/'s rooms include only downward, and ZeroMQ stays in the transport's zmq/ room.
#   gossip/check_rooms.sh SOURCE_DIR    exits 1, naming each offending line
# Rules (a file may include, of gossip/, only these rooms):
#   topology/        topology/
#   transport/       transport/                (its interface: nothing of zmq/)
#   transport/zmq/   transport/, transport/zmq/
#   control/         transport/, control/
#   algorithms/      transport/, topology/, algorithms/
#   the hall (gossip/*.h, *.cpp)   every room but transport/zmq/
# Outside gossip/ nothing includes transport/zmq/, and only transport/zmq/ includes
# <zmq.h>/<zmq.hpp>, but for two tools that speak raw ZeroMQ on purpose (malformed frames).
set -euo pipefail
cd "$1"
status=0
fail() { echo "$1" >&2; status=1; }

room_of() {  # gossip/<room>/... -> room; a file at gossip/ top -> hall
  case "$1" in
    gossip/transport/zmq/*) echo transport/zmq ;;
    gossip/*/*) local r=${1#gossip/}; echo "${r%%/*}" ;;
    *) echo hall ;;
  esac
}

allowed_rooms() {
  case "$1" in
    topology) echo "topology" ;;
    transport) echo "transport" ;;
    transport/zmq) echo "transport transport/zmq" ;;
    control) echo "transport control" ;;
    algorithms) echo "transport topology algorithms" ;;
    hall) echo "transport topology control algorithms hall" ;;
  esac
}

include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*"gossip/[^"]+"'
while IFS= read -r file; do
  room=$(room_of "$file")
  allowed=" $(allowed_rooms "$room") "
  while IFS=: read -r line text; do
    target=$(sed -E 's/.*"(gossip\/[^"]+)".*/\1/' <<<"$text")
    to=$(room_of "$target")
    [[ "$allowed" == *" $to "* ]] || fail "$file:$line: room $room includes $target (room $to)"
  done < <(grep -nE "$include_re" "$file" || true)
done < <(find gossip -name '*.h' -o -name '*.cpp' | sort)

folders=()
for dir in platform kernels learners protocols simulator actors cli examples bench tests; do
  [ -d "$dir" ] && folders+=("$dir")
done
sources=(--include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc')
if hits=$(grep -rnE "${sources[@]}" '#[[:space:]]*include[[:space:]]*"gossip/transport/zmq/' \
    "${folders[@]}" | grep .); then
  fail "a transport-private header (gossip/transport/zmq/) included outside gossip/:"$'\n'"$hits"
fi
exceptions='^(tests/gossip/test_transport\.cpp|tests/tools/flood_peer\.cpp):'
if hits=$(grep -rnE "${sources[@]}" '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]zmq(\.h|\.hpp|_addon\.hpp)[>"]' \
    gossip "${folders[@]}" | grep -v '^gossip/transport/zmq/' | grep -vE "$exceptions" | grep .); then
  fail "ZeroMQ included outside gossip/transport/zmq/:"$'\n'"$hits"
fi
exit $status
