// ZeroMQ messages held in a Payload's place (gossip/transport/zmq/zmq_bridge.h).
#include "gossip/transport/zmq/zmq_bridge.h"

#include <new>

namespace starling::gossip {

namespace {

zmq::message_t* as_message(void* object) noexcept { return std::launder(static_cast<zmq::message_t*>(object)); }

void relocate(void* to, void* from) noexcept {
  zmq::message_t* source = as_message(from);
  ::new (to) zmq::message_t(std::move(*source));
  source->~message_t();
}
void destroy(void* object) noexcept { as_message(object)->~message_t(); }
void* data(void* object) noexcept { return as_message(object)->data(); }
const char* sender_key(const void* object) noexcept {
  return zmq_msg_gets(as_message(const_cast<void*>(object))->handle(), "User-Id");
}

const Payload::Holder kHolder{&relocate, &destroy, &data, &sender_key};

}  // namespace

Payload payload_of(zmq::message_t&& message) noexcept {
  const std::size_t size = message.size();
  return Payload::hold(kHolder, std::move(message), size);
}

zmq::message_t message_of(Payload&& payload) {
  if (zmq::message_t* held = payload.held<zmq::message_t>(kHolder)) {
    zmq::message_t message(std::move(*held));
    payload = Payload();
    return message;
  }
  // A small payload is copied (ZeroMQ keeps up to 33 bytes in the message itself); adopting
  // its bytes would cost an allocation as well.
  if (payload.size() <= Payload::kPlaceBytes) {
    zmq::message_t message(payload.data(), payload.size());
    payload = Payload();
    return message;
  }
  const Payload::Released bytes = std::move(payload).release();
  try {
    return zmq::message_t(bytes.data, bytes.size, bytes.release, bytes.hint);
  } catch (...) {
    bytes.release(bytes.data, bytes.hint);  // ZeroMQ took nothing
    throw;
  }
}

}  // namespace starling::gossip
