#pragma once
// A message payload: an owned, move-only byte buffer. Small ones (a frame header, a
// heartbeat) live in the payload itself; larger ones on the heap, or in bytes the payload
// adopted without a copy: a caller's buffer lent by SendFence::lend(), or a link's own
// received message, held in the payload's place (a Holder), so that what a link received
// reaches the algorithm that consumes it without a copy or an allocation of its own.
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "protocols/span.h"

namespace starling::gossip {

class Payload {
 public:
  /// Gives adopted bytes back; ZeroMQ's zmq_free_fn has this shape.
  using Release = void (*)(void* data, void* hint);

  /// How a link keeps an object of its own (its message type) in a payload's place.
  struct Holder {
    void (*relocate)(void* to, void* from) noexcept;  // move-constructs at `to`, destroys `from`
    void (*destroy)(void* object) noexcept;
    void* (*data)(void* object) noexcept;
    /// The CURVE public key (Z85) the link authenticated the sender under; null if none.
    const char* (*sender_key)(const void* object) noexcept;
  };
  static constexpr std::size_t kPlaceBytes = 64;

  /// Bytes handed over by release(): whoever takes them calls release(data, hint) once.
  struct Released {
    void* data;
    std::size_t size;
    Release release;
    void* hint;
  };

  /// No bytes.
  Payload() noexcept;
  /// `size` bytes, not initialised.
  explicit Payload(std::size_t size);
  /// A copy of `bytes`.
  explicit Payload(protocols::ByteSpan bytes);
  /// Adopts `size` bytes at `data` without a copy; release(data, hint) runs once they are
  /// let go of (by this payload, or by whoever it was released to).
  Payload(void* data, std::size_t size, Release release, void* hint) noexcept;
  /// A payload holding `object` (moved in), whose bytes it reports through `holder`.
  template <class T>
  static Payload hold(const Holder& holder, T&& object, std::size_t size) noexcept;

  Payload(Payload&& other) noexcept;  // leaves `other` empty
  Payload& operator=(Payload&& other) noexcept;
  Payload(const Payload&) = delete;
  Payload& operator=(const Payload&) = delete;
  ~Payload();

  void* data() noexcept { return data_; }
  const void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  protocols::ByteSpan bytes() const noexcept { return {static_cast<const std::uint8_t*>(data_), size_}; }
  /// See Holder::sender_key; null for a payload no link received.
  const char* sender_key() const noexcept;

  /// The object held through `holder` (hold()), or null when this payload holds other bytes.
  template <class T>
  T* held(const Holder& holder) noexcept;
  /// Hands the bytes over without a copy, leaving this payload empty; bytes kept in the
  /// payload itself or in a link's object move to the heap first. Empty: a null release.
  Released release() &&;

 private:
  void become_empty() noexcept;
  void take(Payload& other) noexcept;

  void* data_;
  std::size_t size_;
  const Holder* holder_;
  alignas(void*) unsigned char place_[kPlaceBytes];
};

template <class T>
Payload Payload::hold(const Holder& holder, T&& object, std::size_t size) noexcept {
  using Object = std::remove_reference_t<T>;
  static_assert(sizeof(Object) <= kPlaceBytes && alignof(Object) <= alignof(void*), "the object fits the place");
  static_assert(std::is_nothrow_move_constructible_v<Object>, "a held object moves without throwing");
  Payload p;
  ::new (static_cast<void*>(p.place_)) Object(std::move(object));
  p.holder_ = &holder;
  p.data_ = holder.data(p.place_);
  p.size_ = size;
  return p;
}

template <class T>
T* Payload::held(const Holder& holder) noexcept {
  return holder_ == &holder ? std::launder(reinterpret_cast<T*>(place_)) : nullptr;
}

}  // namespace starling::gossip
