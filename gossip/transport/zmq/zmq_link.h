#pragma once
// The link over ZeroMQ (gossip/transport/link.h): one ROUTER bound on the peer's endpoint,
// a DEALER per neighbour, all owned by an I/O thread (io_loop.h) that the link commands over
// an inproc PAIR. Private to this folder, as zmq_bridge.h.
#include <memory>

#include <zmq.hpp>

#include "gossip/transport/inbox.h"
#include "gossip/transport/link.h"
#include "gossip/transport/transport_stats.h"

namespace starling::gossip {

/// Binds the ROUTER and starts the I/O thread; IoError when the endpoint cannot be bound.
std::unique_ptr<Link> open_zmq_link(zmq::context_t& context, const TransportOptions& options, Inbox& inbox,
                                    StatsRecorder& stats);

}  // namespace starling::gossip
