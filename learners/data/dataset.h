#pragma once
// Labelled image datasets in Starling's packed format: a 64-byte header and fixed-size
// records (label byte, then h·w·c pixel bytes), memory-mapped read-only. Published formats
// are converted into it once and cached (learners/data/dataset_formats.h).
//
// Packed header (little-endian): "STRLDS01" | u32 version=1 | u32 count | u32 h | u32 w |
// u32 c | u32 classes | u32 record_bytes | u32 crc32(records) | f32 mean | f32 std | 16 zero bytes.
#include "learners/models/layer.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace starling {

/// A dataset file that is missing, truncated, corrupted or inconsistent.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Dataset {
 public:
  /// Maps and validates a packed file (size, magic, version, checksum, labels).
  static Dataset open_packed(const std::string& path);
  /// A dataset held in memory: `records` as in the packed format, without the header.
  static Dataset from_records(uint32_t count, Shape shape, int classes, std::vector<uint8_t> records);
  /// Writes the packed format atomically (temporary file, then rename).
  void write_packed(const std::string& path) const;

  uint32_t size() const { return count_; }
  Shape shape() const { return shape_; }
  int classes() const { return classes_; }
  uint8_t label(uint32_t i) const { return records_[static_cast<std::size_t>(i) * record_bytes_]; }
  const uint8_t* pixels(uint32_t i) const { return records_ + static_cast<std::size_t>(i) * record_bytes_ + 1; }

  /// Normalised inputs x[n × h·w·c] = (pixel/255 − mean)/std and labels y[n] for the given indices.
  void gather(const uint32_t* indices, int n, float* x, int32_t* y) const;

 private:
  struct Storage;
  void compute_stats();

  std::shared_ptr<Storage> storage_;
  const uint8_t* records_ = nullptr;
  uint32_t count_ = 0;
  Shape shape_;
  int classes_ = 0;
  std::size_t record_bytes_ = 0;
  float mean_ = 0.f, std_ = 1.f;
};

struct TrainTest {
  Dataset train, test;
};

/// A seeded, learnable stand-in: each class a random prototype image, samples are the
/// prototype plus noise. Same seed, same data.
TrainTest make_synthetic(uint32_t train_count, uint32_t test_count, uint64_t seed, Shape shape = {28, 28, 1},
                         int classes = 10);

}  // namespace starling
