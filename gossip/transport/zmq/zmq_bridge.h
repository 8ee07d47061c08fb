#pragma once
// Private to gossip/transport/zmq/ (gossip/check_rooms.sh keeps it so): the ZeroMQ objects
// behind Payload. Only in this folder does <zmq.hpp> appear, so
// nothing that includes the transport's interface compiles against ZeroMQ.
#include <new>

#include <zmq.hpp>

#include "gossip/transport/payload.h"

namespace starling::gossip {

struct ZmqBridge {
  /// The message a payload holds in place. A zmq::message_t move-constructed from it
  /// leaves the payload empty (cppzmq's move assignment swaps instead).
  static zmq::message_t& message(Payload& payload) noexcept {
    static_assert(sizeof(zmq::message_t) <= Payload::kStorageBytes, "Payload::storage_ holds a zmq::message_t");
    static_assert(alignof(zmq::message_t) <= alignof(void*), "Payload::storage_ is aligned for a zmq::message_t");
    return *std::launder(reinterpret_cast<zmq::message_t*>(payload.storage_));
  }
  static const zmq::message_t& message(const Payload& payload) noexcept {
    return *std::launder(reinterpret_cast<const zmq::message_t*>(payload.storage_));
  }

  /// A payload holding `message`, its bytes not copied.
  static Payload payload(zmq::message_t&& message) noexcept {
    Payload p;
    ZmqBridge::message(p) = std::move(message);
    return p;
  }
};

}  // namespace starling::gossip
