#pragma once
// A zero-initialised, 64-byte aligned array: the storage behind the flat parameter arena,
// gradients, optimizer state and activations.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace starling {

template <typename T>
class AlignedBuffer {
 public:
  static constexpr std::size_t alignment = 64;

  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t count) { resize(count); }
  AlignedBuffer(const AlignedBuffer& other) : AlignedBuffer(other.size_) {
    if (size_) std::memcpy(data_, other.data_, size_ * sizeof(T));
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept { swap(other); }
  AlignedBuffer& operator=(AlignedBuffer other) noexcept {
    swap(other);
    return *this;
  }
  ~AlignedBuffer() { std::free(data_); }

  /// Reallocates to `count` zeroed elements (contents are not kept).
  void resize(std::size_t count) {
    std::free(data_);
    data_ = nullptr;
    size_ = count;
    if (count == 0) return;
    const std::size_t bytes = (count * sizeof(T) + alignment - 1) / alignment * alignment;
    data_ = static_cast<T*>(std::aligned_alloc(alignment, bytes));
    if (!data_) throw std::bad_alloc();
    std::memset(static_cast<void*>(data_), 0, bytes);
  }
  /// Grows to at least `count` elements; never shrinks.
  void reserve(std::size_t count) {
    if (count > size_) resize(count);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  void swap(AlignedBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace starling
