#pragma once
// A minimal non-owning view of contiguous elements (C++17 has no std::span). Codecs and
// frame parsers take Span<const T> for input and Span<T> for output so that they never
// allocate or reach past what the caller handed them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace starling::protocols {

template <class T>
class Span {
 public:
  constexpr Span() = default;
  constexpr Span(T* data, std::size_t size) : data_(data), size_(size) {}
  template <std::size_t N>
  constexpr Span(T (&array)[N]) : data_(array), size_(N) {}  // NOLINT: implicit by design
  template <class U, class A>
  Span(std::vector<U, A>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT: implicit by design
  template <class U, class A>
  Span(const std::vector<U, A>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <class U>
  constexpr Span(Span<U> other) : data_(other.data()), size_(other.size()) {}  // NOLINT

  constexpr T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](std::size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }
  /// Elements [offset, offset + count); the caller guarantees the range is inside.
  constexpr Span subspan(std::size_t offset, std::size_t count) const { return {data_ + offset, count}; }
  constexpr Span subspan(std::size_t offset) const { return {data_ + offset, size_ - offset}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

using ByteSpan = Span<const std::uint8_t>;

}  // namespace starling::protocols
