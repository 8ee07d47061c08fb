// The shared ZeroMQ context, or the in-memory network, behind TransportContext
// (gossip/transport/transport_context.h).
#include "gossip/transport/transport_context.h"

#include "gossip/transport/memory_network.h"
#include "gossip/transport/zmq/zmq_link.h"

#include <zmq.hpp>

namespace starling::gossip {

struct TransportContext::Impl {
  explicit Impl(int io_threads) : context(io_threads) {}
  zmq::context_t context;
};

TransportContext::TransportContext(int io_threads) : impl_(std::make_unique<Impl>(io_threads)) {}

TransportContext::TransportContext(InMemory in_memory)
    : memory_(std::make_unique<MemoryNetwork>(std::move(in_memory.clock))) {}

TransportContext::~TransportContext() = default;

std::unique_ptr<Link> TransportContext::open(const TransportOptions& options, Inbox& inbox, StatsRecorder& stats) {
  if (memory_) return memory_->open(options, inbox, stats);
  return open_zmq_link(impl_->context, options, inbox, stats);
}

}  // namespace starling::gossip
