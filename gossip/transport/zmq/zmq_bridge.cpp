// ZeroMQ messages held in a Payload's place (gossip/transport/zmq/zmq_bridge.h).
#include "gossip/transport/zmq/zmq_bridge.h"

#include <memory>
#include <new>
#include <string>

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

// A message with the key its box was opened under.
struct Keyed {
  zmq::message_t message;
  std::string key;
};
using KeyedPtr = std::unique_ptr<Keyed>;
KeyedPtr* as_keyed(void* object) noexcept { return std::launder(static_cast<KeyedPtr*>(object)); }

void relocate_keyed(void* to, void* from) noexcept {
  KeyedPtr* source = as_keyed(from);
  ::new (to) KeyedPtr(std::move(*source));
  source->~KeyedPtr();
}
void destroy_keyed(void* object) noexcept { as_keyed(object)->~KeyedPtr(); }
void* data_keyed(void* object) noexcept { return (*as_keyed(object))->message.data(); }
const char* key_of_keyed(const void* object) noexcept { return (*as_keyed(const_cast<void*>(object)))->key.c_str(); }

const Payload::Holder kKeyedHolder{&relocate_keyed, &destroy_keyed, &data_keyed, &key_of_keyed};

}  // namespace

Payload payload_of(zmq::message_t&& message) noexcept {
  const std::size_t size = message.size();
  return Payload::hold(kHolder, std::move(message), size);
}

Payload payload_of(zmq::message_t&& message, const std::string& sender_key) {
  const std::size_t size = message.size();
  return Payload::hold(kKeyedHolder, std::make_unique<Keyed>(Keyed{std::move(message), sender_key}), size);
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
