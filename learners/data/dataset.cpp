#include "learners/data/dataset.h"

#include "learners/checkpoints/crc32.h"
#include "learners/data/mapped_file.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace starling {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'L', 'D', 'S', '0', '1'};
constexpr uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 64;

struct PackedHeader {
  char magic[8];
  uint32_t version, count, h, w, c, classes, record_bytes, crc;
  float mean, std;
  uint8_t reserved[16];
};
static_assert(sizeof(PackedHeader) == kHeaderBytes, "packed header is 64 bytes");

}  // namespace

struct Dataset::Storage : ByteStorage {};

Dataset Dataset::open_packed(const std::string& path) {
  auto storage = std::make_shared<Storage>();
  map_file(path, kHeaderBytes, *storage);
  const void* map = storage->map;
  const std::size_t bytes = storage->map_bytes;

  PackedHeader h;
  std::memcpy(&h, map, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw DataError(path + ": not a Starling packed dataset");
  if (h.version != kVersion) throw DataError(path + ": packed format version " + std::to_string(h.version) + " is not 1");
  const uint64_t pixels = uint64_t{h.h} * h.w * h.c;
  if (pixels == 0 || h.record_bytes != pixels + 1 || h.classes < 2 || h.classes > 256 || h.count == 0)
    throw DataError(path + ": inconsistent header");
  if (bytes != kHeaderBytes + uint64_t{h.count} * h.record_bytes)
    throw DataError(path + ": size " + std::to_string(bytes) + " does not match its header (truncated?)");
  const auto* records = static_cast<const uint8_t*>(map) + kHeaderBytes;
  if (crc32_of(records, bytes - kHeaderBytes) != h.crc) throw DataError(path + ": checksum mismatch (corrupted)");
  if (!std::isfinite(h.mean) || !(h.std > 0.f) || !std::isfinite(h.std)) throw DataError(path + ": bad statistics");

  Dataset d;
  d.storage_ = std::move(storage);
  d.records_ = records;
  d.count_ = h.count;
  d.shape_ = {static_cast<int>(h.h), static_cast<int>(h.w), static_cast<int>(h.c)};
  d.classes_ = static_cast<int>(h.classes);
  d.record_bytes_ = h.record_bytes;
  d.mean_ = h.mean;
  d.std_ = h.std;
  for (uint32_t i = 0; i < d.count_; ++i)
    if (d.label(i) >= d.classes_) throw DataError(path + ": label out of range at record " + std::to_string(i));
  return d;
}

Dataset Dataset::from_records(uint32_t count, Shape shape, int classes, std::vector<uint8_t> records) {
  Dataset d;
  d.record_bytes_ = static_cast<std::size_t>(shape.size()) + 1;
  if (records.size() != count * d.record_bytes_) throw DataError("dataset: record buffer has the wrong size");
  d.storage_ = std::make_shared<Storage>();
  d.storage_->owned = std::move(records);
  d.records_ = d.storage_->owned.data();
  d.count_ = count;
  d.shape_ = shape;
  d.classes_ = classes;
  d.compute_stats();
  return d;
}

void Dataset::compute_stats() {
  double sum = 0.0, sum_sq = 0.0;
  const std::size_t n = static_cast<std::size_t>(shape_.size());
  for (uint32_t i = 0; i < count_; ++i) {
    const uint8_t* p = pixels(i);
    uint64_t s = 0, s2 = 0;
    for (std::size_t j = 0; j < n; ++j) s += p[j], s2 += uint64_t{p[j]} * p[j];
    sum += static_cast<double>(s);
    sum_sq += static_cast<double>(s2);
  }
  const double total = static_cast<double>(count_) * static_cast<double>(n) * 255.0;
  const double mean = sum / total;  // in units of full scale
  const double var = sum_sq / (total * 255.0) - mean * mean;
  mean_ = static_cast<float>(mean);
  std_ = static_cast<float>(std::sqrt(std::max(var, 1e-6)));
}

void Dataset::write_packed(const std::string& path) const {
  PackedHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.count = count_;
  h.h = static_cast<uint32_t>(shape_.h), h.w = static_cast<uint32_t>(shape_.w), h.c = static_cast<uint32_t>(shape_.c);
  h.classes = static_cast<uint32_t>(classes_);
  h.record_bytes = static_cast<uint32_t>(record_bytes_);
  h.crc = crc32_of(records_, count_ * record_bytes_);
  h.mean = mean_, h.std = std_;
  // A name of this process's own: peers started together may all fill the same cache.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw DataError(tmp + ": cannot write: " + std::strerror(errno));
  const bool ok = std::fwrite(&h, sizeof h, 1, f) == 1 &&
                  std::fwrite(records_, record_bytes_, count_, f) == count_ && std::fflush(f) == 0 &&
                  ::fsync(fileno(f)) == 0;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw DataError(path + ": write failed: " + std::strerror(errno));
  }
}

// The batch's records lie anywhere in the set, mostly in memory: asking for all their lines
// first lets those reads overlap, where the conversion below would wait for each record.
void Dataset::gather(const uint32_t* indices, int n, float* x, int32_t* y) const {
  constexpr std::size_t kLine = 64;
  for (int i = 0; i < n; ++i) {
    const uint8_t* record = records_ + static_cast<std::size_t>(indices[i]) * record_bytes_;
    for (std::size_t at = 0; at < record_bytes_; at += kLine) __builtin_prefetch(record + at, 0, 2);
    __builtin_prefetch(record + record_bytes_ - 1, 0, 2);  // the line the record ends in
  }
  const std::size_t size = static_cast<std::size_t>(shape_.size());
  const float scale = 1.f / (255.f * std_), shift = -mean_ / std_;
  for (int i = 0; i < n; ++i) {
    const uint8_t* p = pixels(indices[i]);
    float* xi = x + static_cast<std::size_t>(i) * size;
    for (std::size_t j = 0; j < size; ++j) xi[j] = static_cast<float>(p[j]) * scale + shift;
    y[i] = label(indices[i]);
  }
}

TrainTest make_synthetic(uint32_t train_count, uint32_t test_count, uint64_t seed, Shape shape, int classes) {
  std::mt19937_64 rng(seed);
  const std::size_t pixels = static_cast<std::size_t>(shape.size());
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> prototypes(static_cast<std::size_t>(classes) * pixels);
  for (auto& p : prototypes) p = static_cast<uint8_t>(byte(rng) > 160 ? 220 : 30);
  auto make = [&](uint32_t count) {
    std::vector<uint8_t> records(count * (pixels + 1));
    std::normal_distribution<float> noise(0.f, 60.f);
    for (uint32_t i = 0; i < count; ++i) {
      const int label = static_cast<int>(rng() % static_cast<uint64_t>(classes));
      uint8_t* r = &records[i * (pixels + 1)];
      r[0] = static_cast<uint8_t>(label);
      for (std::size_t j = 0; j < pixels; ++j) {
        const float v = prototypes[static_cast<std::size_t>(label) * pixels + j] + noise(rng);
        r[j + 1] = static_cast<uint8_t>(std::clamp(v, 0.f, 255.f));
      }
    }
    return Dataset::from_records(count, shape, classes, std::move(records));
  };
  Dataset train = make(train_count);
  Dataset test = make(test_count);
  return {std::move(train), std::move(test)};
}

}  // namespace starling
