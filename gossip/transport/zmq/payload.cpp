// Payloads as ZeroMQ messages held in place (gossip/transport/payload.h).
#include "gossip/transport/payload.h"

#include <cstring>

#include "gossip/transport/zmq/zmq_bridge.h"

namespace starling::gossip {

Payload::Payload() noexcept { new (storage_) zmq::message_t(); }

Payload::Payload(std::size_t size) { new (storage_) zmq::message_t(size); }

Payload::Payload(protocols::ByteSpan bytes) {
  zmq::message_t* m = new (storage_) zmq::message_t(bytes.size());
  if (bytes.size()) std::memcpy(m->data(), bytes.data(), bytes.size());
}

Payload::Payload(Payload&& other) noexcept {
  new (storage_) zmq::message_t(std::move(ZmqBridge::message(other)));
}

Payload& Payload::operator=(Payload&& other) noexcept {
  // cppzmq's move assignment swaps; through a temporary, `other` ends empty and this
  // payload's old bytes are released here (a lent buffer's fence hears of it now).
  if (this != &other) ZmqBridge::message(*this) = zmq::message_t(std::move(ZmqBridge::message(other)));
  return *this;
}

Payload::~Payload() { ZmqBridge::message(*this).~message_t(); }

void* Payload::data() noexcept { return ZmqBridge::message(*this).data(); }

const void* Payload::data() const noexcept { return ZmqBridge::message(*this).data(); }

std::size_t Payload::size() const noexcept { return ZmqBridge::message(*this).size(); }

}  // namespace starling::gossip
