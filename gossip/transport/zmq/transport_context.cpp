// The shared ZeroMQ context behind TransportContext (gossip/transport/transport_context.h).
#include "gossip/transport/transport_context.h"

#include "gossip/transport/zmq/zmq_bridge.h"

namespace starling::gossip {

struct TransportContext::Impl {
  explicit Impl(int io_threads) : context(io_threads) {}
  zmq::context_t context;
};

TransportContext::TransportContext(int io_threads) : impl_(std::make_unique<Impl>(io_threads)) {}

TransportContext::~TransportContext() = default;

zmq::context_t& ZmqBridge::context(TransportContext& context) { return context.impl_->context; }

}  // namespace starling::gossip
