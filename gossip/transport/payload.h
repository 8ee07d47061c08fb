#pragma once
// A message payload: an owned, move-only byte buffer. What the transport received is
// handed over in one without a copy (it holds the transport's own message, large tensor
// frames included), and one made by SendFence::lend() points at the caller's bytes instead
// of owning a copy of them.
#include <cstddef>
#include <cstdint>

#include "protocols/span.h"

namespace starling::gossip {

class Payload {
 public:
  /// No bytes.
  Payload() noexcept;
  /// `size` bytes, not initialised.
  explicit Payload(std::size_t size);
  /// A copy of `bytes`.
  explicit Payload(protocols::ByteSpan bytes);
  Payload(Payload&& other) noexcept;  // leaves `other` empty
  Payload& operator=(Payload&& other) noexcept;
  Payload(const Payload&) = delete;
  Payload& operator=(const Payload&) = delete;
  ~Payload();

  void* data() noexcept;
  const void* data() const noexcept;
  std::size_t size() const noexcept;
  protocols::ByteSpan bytes() const noexcept {
    return {static_cast<const std::uint8_t*>(data()), size()};
  }

 private:
  friend struct ZmqBridge;
  // Room for the transport's message object in place (ZeroMQ's zmq_msg_t: 64 bytes,
  // pointer-aligned), so that a payload costs no allocation of its own; the bridge checks
  // that it fits (gossip/transport/zmq/zmq_bridge.h).
  static constexpr std::size_t kStorageBytes = 64;
  alignas(void*) unsigned char storage_[kStorageBytes];
};

}  // namespace starling::gossip
