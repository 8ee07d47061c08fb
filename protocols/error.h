#pragma once
// Why a frame or payload was rejected, as a value. Decoders never throw or abort on input;
// they return one of these and the caller counts the drop under to_string(error).
#include <optional>
#include <string_view>
#include <utility>

namespace starling::protocols {

enum class Error {
  ok = 0,
  truncated,             // fewer bytes than the header or a declared length needs
  oversized,             // more bytes than declared, or more than the receiver's limit
  bad_magic,             // not a Starling frame
  unsupported_version,   // a protocol version this build does not speak
  unknown_message_type,
  unknown_codec,         // codec id or codec name not known
  bad_header,            // reserved bits/fields set, or fields inconsistent with each other
  crc_mismatch,          // payload CRC-32C differs from the header's
  codec_mismatch,        // payload was produced by another codec than the one decoding it
  length_mismatch,       // element count differs from the destination tensor
  tensor_out_of_range,   // offset + length beyond the model
  index_out_of_range,    // a sparse index outside the tensor
  bad_index_order,       // sparse indices not strictly increasing (duplicates)
  non_finite,            // NaN or infinity in values or scales
  bad_parameter,         // a codec parameter from the wire out of its range (bits, rank, bucket, τ)
  bad_encoding,          // a bit pattern the format does not define
  shape_mismatch,        // the peer's model shape signature differs from ours
  unknown_sender,        // sender id not among the known peers
  unexpected_round,      // round outside the window the receiver accepts
  invalid_option,        // a local configuration error (codec options, encode arguments)
};

/// Stable snake_case name of the error, for drop-reason counters and logs.
std::string_view to_string(Error error);

/// A value or the Error that prevented it; a small stand-in for std::expected.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : error_(error) {}         // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  Error error() const { return value_ ? Error::ok : error_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Error error_ = Error::ok;
};

}  // namespace starling::protocols
