// The choice of link: ZeroMQ's or the in-memory network's (gossip/transport/transport_context.h).
#include "gossip/transport/transport_context.h"

#include "gossip/transport/memory/memory_network.h"
#include "gossip/transport/zmq/zmq_link.h"

namespace starling::gossip {

TransportContext::TransportContext(int io_threads) : links_(zmq_links(io_threads)) {}

TransportContext::TransportContext(InMemory in_memory) {
  auto network = std::make_unique<MemoryNetwork>(std::move(in_memory.clock));
  memory_ = network.get();
  links_ = std::move(network);
}

TransportContext::~TransportContext() = default;

std::unique_ptr<Link> TransportContext::open(const TransportOptions& options, Inbox& inbox, StatsRecorder& stats) {
  return links_->open(options, inbox, stats);
}

}  // namespace starling::gossip
