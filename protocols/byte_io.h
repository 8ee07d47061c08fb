#pragma once
// Little-endian field access over byte buffers. The reader is bounds-checked: every read
// past the end fails (and keeps failing) instead of touching memory it was not given.
#include <cstdint>
#include <cstring>
#include <vector>

#include "protocols/span.h"

namespace starling::protocols {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "wire format assumes a little-endian host");

template <class T>
inline T load_le(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
inline void store_le(std::uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

/// Sequential bounded reader; ok() turns false on the first read past the end.
class ByteReader {
 public:
  explicit ByteReader(ByteSpan bytes) : bytes_(bytes) {}

  template <class T>
  T read() {
    if (!ok_ || remaining() < sizeof(T)) {
      ok_ = false;
      return T{};
    }
    T v = load_le<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return v;
  }
  /// The next `count` bytes as a view, or an empty view (and !ok()) if fewer remain.
  ByteSpan take(std::size_t count) {
    if (!ok_ || remaining() < count) {
      ok_ = false;
      return {};
    }
    ByteSpan s = bytes_.subspan(pos_, count);
    pos_ += count;
    return s;
  }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  bool ok() const { return ok_; }

 private:
  ByteSpan bytes_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

/// Appends little-endian fields to a byte vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  template <class T>
  void write(T v) {
    std::size_t at = out_.size();
    out_.resize(at + sizeof(T));
    store_le(out_.data() + at, v);
  }
  void write_bytes(const void* data, std::size_t count) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    out_.insert(out_.end(), p, p + count);
  }

 private:
  std::vector<std::uint8_t>& out_;
};

}  // namespace starling::protocols
