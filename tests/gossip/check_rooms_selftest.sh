#!/usr/bin/env bash
# gossip/check_rooms.sh passes the tree as it is and fails each kind of wrong-way include,
# stray ZeroMQ and stray cppzmq, naming it, in a copy of gossip/ with one line added.
#   check_rooms_selftest.sh SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../rooms_selftest.sh"
rooms_selftest "$1" gossip/check_rooms.sh gossip
fresh_extra() {  # cli/ with one file that includes nothing yet
  mkdir -p "$tmp/tree/cli"
  : >"$tmp/tree/cli/some_command.cpp"
}

case_ gossip/transport/inbox.cpp '' ''
case_ gossip/transport/inbox.cpp '#include "gossip/transport/memory/memory_network.h"' \
  'room transport includes gossip/transport/memory/memory_network.h'
case_ gossip/transport/transport.h '#include "gossip/transport/zmq/zmq_link.h"' 'room transport includes'
case_ gossip/transport/memory/memory_network.cpp '#include "gossip/transport/zmq/zmq_link.h"' \
  'room transport/memory includes'
case_ gossip/transport/zmq/zmq_link.h '#include "gossip/transport/zmq/io_loop.h"' \
  'room transport/zmq/public includes gossip/transport/zmq/io_loop.h'
case_ gossip/transport/transport_context.cpp '#include "gossip/transport/zmq/zmq_bridge.h"' \
  'room transport/choice includes'
case_ gossip/peer_exchange.cpp '#include "gossip/transport/zmq/zmq_bridge.h"' 'room hall includes'
case_ gossip/peer_exchange.cpp '#include "gossip/transport/memory/memory_network.h"' ''
case_ gossip/algorithms/allreduce_ring.cpp '#include "gossip/control/membership.h"' 'room algorithms includes'
case_ gossip/topology/topology.h '#include "gossip/transport/message.h"' 'room topology includes'
case_ cli/some_command.cpp '#include "gossip/transport/zmq/io_loop.h"' 'a transport-private header'
case_ cli/some_command.cpp '#include "gossip/transport/zmq/curve_pairs.h"' ''
case_ cli/some_command.cpp '#include <zmq.hpp>' 'ZeroMQ included outside gossip/transport/zmq/'
case_ gossip/transport/memory/memory_network.cpp '#include <zmq.h>' 'ZeroMQ included outside'
case_ gossip/transport/zmq/curve_pairs.h '#include <zmq.h>' 'a public header of gossip/transport/zmq/ includes ZeroMQ'
case_ gossip/transport/CMakeLists.txt 'target_link_libraries(starling_gossip_transport PRIVATE cppzmq)' \
  'cppzmq linked outside gossip/transport/zmq/'
echo "check_rooms selftest: 16 cases passed"
