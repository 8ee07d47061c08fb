// Payloads: bytes in place, adopted bytes, or a link's object (gossip/transport/payload.h).
#include "gossip/transport/payload.h"

#include <cstdlib>
#include <cstring>

namespace starling::gossip {

namespace {

// Bytes kept in the place itself: a payload of at most kPlaceBytes costs no allocation.
void relocate_in_place(void* to, void* from) noexcept { std::memcpy(to, from, Payload::kPlaceBytes); }
void destroy_nothing(void*) noexcept {}
void* data_in_place(void* object) noexcept { return object; }

const Payload::Holder kInPlace{&relocate_in_place, &destroy_nothing, &data_in_place, nullptr};

// Bytes elsewhere, given back through their release.
struct Adopted {
  void* data;
  Payload::Release release;
  void* hint;
};

void relocate_adopted(void* to, void* from) noexcept {
  auto* source = static_cast<Adopted*>(from);
  ::new (to) Adopted(*source);
  source->release = nullptr;
}
void destroy_adopted(void* object) noexcept {
  const auto* a = static_cast<Adopted*>(object);
  if (a->release) a->release(a->data, a->hint);
}
void* data_adopted(void* object) noexcept { return static_cast<Adopted*>(object)->data; }

const Payload::Holder kAdopted{&relocate_adopted, &destroy_adopted, &data_adopted, nullptr};

void free_bytes(void* data, void*) { std::free(data); }
void delete_payload(void*, void* hint) { delete static_cast<Payload*>(hint); }

}  // namespace

Payload::Payload() noexcept { become_empty(); }

Payload::Payload(std::size_t size) : Payload() {
  if (size <= kPlaceBytes) {
    size_ = size;
    return;
  }
  void* bytes = std::malloc(size);
  if (!bytes) throw std::bad_alloc();
  ::new (static_cast<void*>(place_)) Adopted{bytes, &free_bytes, nullptr};
  holder_ = &kAdopted;
  data_ = bytes;
  size_ = size;
}

Payload::Payload(protocols::ByteSpan bytes) : Payload(bytes.size()) {
  if (bytes.size()) std::memcpy(data_, bytes.data(), bytes.size());
}

Payload::Payload(void* data, std::size_t size, Release release, void* hint) noexcept {
  ::new (static_cast<void*>(place_)) Adopted{data, release, hint};
  holder_ = &kAdopted;
  data_ = data;
  size_ = size;
}

Payload::Payload(Payload&& other) noexcept { take(other); }

Payload& Payload::operator=(Payload&& other) noexcept {
  if (this != &other) {
    holder_->destroy(place_);
    take(other);
  }
  return *this;
}

Payload::~Payload() { holder_->destroy(place_); }

void Payload::become_empty() noexcept {
  holder_ = &kInPlace;
  data_ = place_;
  size_ = 0;
}

void Payload::take(Payload& other) noexcept {
  holder_ = other.holder_;
  size_ = other.size_;
  holder_->relocate(place_, other.place_);
  data_ = holder_->data(place_);
  other.become_empty();
}

const char* Payload::sender_key() const noexcept {
  return holder_->sender_key ? holder_->sender_key(place_) : nullptr;
}

Payload::Released Payload::release() && {
  if (size_ == 0) {
    holder_->destroy(place_);
    become_empty();
    return {nullptr, 0, nullptr, nullptr};
  }
  if (holder_ == &kAdopted) {
    const Adopted a = *std::launder(reinterpret_cast<Adopted*>(place_));
    const std::size_t size = size_;
    become_empty();
    return {a.data, size, a.release, a.hint};
  }
  auto* moved = new Payload(std::move(*this));
  return {moved->data(), moved->size(), &delete_payload, moved};
}

}  // namespace starling::gossip
