#pragma once
// The link over ZeroMQ (gossip/transport/link.h): one ROUTER bound on the peer's endpoint,
// a DEALER per neighbour, all owned by an I/O thread (io_loop.h) that the link commands over
// an inproc PAIR. One of zmq/'s two public headers: it includes no ZeroMQ.
#include <memory>

#include "gossip/transport/link.h"

namespace starling::gossip {

/// A ZeroMQ context with `io_threads` background threads, opening one link per transport
/// (each binds its ROUTER and starts its I/O thread; IoError when the endpoint cannot be bound).
std::unique_ptr<LinkFactory> zmq_links(int io_threads);

}  // namespace starling::gossip
