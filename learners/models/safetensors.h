#pragma once
// The safetensors file format, the field's exchange format for weights: an 8-byte
// little-endian header length N, N bytes of JSON that give each tensor's dtype, shape and
// byte range [begin, end) in the data after the header, and an optional "__metadata__"
// object of strings. Starling writes F32 and reads F32, F16 and BF16 as float. A malformed
// file (truncated, an oversized or unparsable header, ranges that overlap, leave holes or
// disagree with the shape) is a SafetensorsError naming the file and the fault.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace starling {

struct SafetensorsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A header longer than this is refused (the reference implementation's limit, 100 MB).
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;  // PyTorch's order; empty for a scalar
  std::vector<float> values;   // row-major, as many as the shape's product
};

struct TensorFile {
  std::vector<NamedTensor> tensors;  // in the order written (reading: ordered by data offset)
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or null.
  const NamedTensor* find(const std::string& name) const;
};

/// Writes `file` as F32 tensors, atomically (a temporary file renamed over `path`); throws
/// SafetensorsError when a tensor's values disagree with its shape, a name repeats or
/// the file cannot be written.
void write_safetensors(const std::string& path, const TensorFile& file);

/// Reads and validates the whole file; throws SafetensorsError.
TensorFile read_safetensors(const std::string& path);

}  // namespace starling
