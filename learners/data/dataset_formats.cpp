// Published image-set formats converted into the packed format (learners/data/dataset_formats.h).
#include "learners/data/dataset_formats.h"

#include "learners/data/idx.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace starling {
namespace {

namespace fs = std::filesystem;

// The packed file at `packed` if it validates, else `build()` written there and mapped.
template <typename Build>
Dataset cached(const std::string& packed, const Warn& warn, Build build) {
  if (fs::exists(packed)) {
    try {
      return Dataset::open_packed(packed);
    } catch (const DataError& e) {
      warn(std::string(e.what()) + "; rebuilding the cache");
    }
  }
  build().write_packed(packed);
  return Dataset::open_packed(packed);
}

// `dir/name.gz` when it exists, else `dir/name`; a DataError naming both when neither does.
std::string idx_file(const std::string& dir, const std::string& name) {
  for (const std::string& candidate : {dir + "/" + name + ".gz", dir + "/" + name})
    if (fs::exists(candidate)) return candidate;
  throw DataError(dir + "/" + name + "(.gz): missing");
}

struct IdxPair {
  std::string images, labels;
};

IdxPair idx_pair(const std::string& dir, const std::string& prefix) {
  return {idx_file(dir, prefix + "-images-idx3-ubyte"), idx_file(dir, prefix + "-labels-idx1-ubyte")};
}

Dataset pack_idx(const IdxPair& files, int classes) {
  const IdxArray images = read_idx(files.images, 3);
  const IdxArray labels = read_idx(files.labels, 1);
  if (images.dims[0] != labels.dims[0])
    throw DataError(files.images + ": " + std::to_string(images.dims[0]) + " images but " + files.labels + " has " +
                    std::to_string(labels.dims[0]) + " labels");
  const uint32_t count = images.dims[0];
  const std::size_t pixels = std::size_t{images.dims[1]} * images.dims[2];
  if (count == 0 || pixels == 0) throw DataError(files.images + ": no images");
  std::vector<uint8_t> records(count * (pixels + 1));
  for (uint32_t i = 0; i < count; ++i) {
    if (labels.data[i] >= classes)
      throw DataError(files.labels + ": label " + std::to_string(labels.data[i]) + " out of range (the training labels go to " +
                      std::to_string(classes - 1) + ")");
    records[i * (pixels + 1)] = labels.data[i];
    std::memcpy(&records[i * (pixels + 1) + 1], &images.data[i * pixels], pixels);
  }
  return Dataset::from_records(count, {static_cast<int>(images.dims[1]), static_cast<int>(images.dims[2]), 1}, classes,
                               std::move(records));
}

// The class count of an IDX set: its largest training label + 1 (at least 2).
int idx_classes(const IdxPair& train) {
  const IdxArray labels = read_idx(train.labels, 1);
  const int top = labels.data.empty() ? 0 : *std::max_element(labels.data.begin(), labels.data.end());
  if (top < 1) throw DataError(train.labels + ": fewer than two classes");
  return top + 1;
}

TrainTest load_idx_named(const std::string& cache_dir, const IdxPair& train, const IdxPair& test, const std::string& name,
                         const Warn& warn) {
  make_cache_dir(cache_dir);
  const std::string base = cache_dir + "/" + name + "-";
  Dataset train_set = cached(base + "train.sds", warn, [&] { return pack_idx(train, idx_classes(train)); });
  Dataset test_set = cached(base + "test.sds", warn, [&] { return pack_idx(test, train_set.classes()); });
  if (!(test_set.shape() == train_set.shape()))
    throw DataError(test.images + ": its images are not the size of the training images");
  return {std::move(train_set), std::move(test_set)};
}

constexpr int kCifarSide = kCifar10Shape.h, kCifarChannels = kCifar10Shape.c, kCifarClasses = kCifar10Classes;
constexpr std::size_t kCifarPixels = std::size_t{kCifarSide} * kCifarSide * kCifarChannels;

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": missing or unreadable");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Appends `path`'s records, each a label byte and the pixels plane by plane (R, G, B),
// as packed records in height × width × channel order.
void append_cifar_batch(const std::string& path, std::vector<uint8_t>& records, uint32_t& count) {
  const std::vector<uint8_t> raw = read_file(path);
  const std::size_t in_record = kCifarPixels + 1;
  if (raw.empty() || raw.size() % in_record != 0)
    throw DataError(path + ": " + std::to_string(raw.size()) + " bytes is not a whole number of CIFAR-10 records of " +
                    std::to_string(in_record) + " bytes (truncated?)");
  const std::size_t plane = std::size_t{kCifarSide} * kCifarSide;
  for (std::size_t r = 0; r < raw.size() / in_record; ++r, ++count) {
    const uint8_t* in = &raw[r * in_record];
    if (in[0] >= kCifarClasses)
      throw DataError(path + ": label " + std::to_string(in[0]) + " in record " + std::to_string(r) + " (corrupted?)");
    records.push_back(in[0]);
    for (std::size_t p = 0; p < plane; ++p)
      for (int c = 0; c < kCifarChannels; ++c) records.push_back(in[1 + c * plane + p]);
  }
}

Dataset pack_cifar(const std::vector<std::string>& batches) {
  std::vector<uint8_t> records;
  uint32_t count = 0;
  for (const std::string& path : batches) append_cifar_batch(path, records, count);
  return Dataset::from_records(count, kCifar10Shape, kCifarClasses, std::move(records));
}

}  // namespace

void make_cache_dir(const std::string& cache_dir) {
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) throw DataError(cache_dir + ": cannot create the data cache: " + ec.message());
}

// FNV-1a over the paths, sizes and modification times.
std::string source_stamp(const std::vector<std::string>& paths) {
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&hash](const std::string& bytes) {
    for (unsigned char b : bytes) hash = (hash ^ b) * 1099511628211ull;
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    mix(fs::weakly_canonical(p, ec).string());
    mix(std::to_string(fs::file_size(p, ec)));
    mix(std::to_string(fs::last_write_time(p, ec).time_since_epoch().count()));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

TrainTest load_idx_set(const std::string& cache_dir, const std::string& source_dir, const Warn& warn) {
  const IdxPair train = idx_pair(source_dir, "train"), test = idx_pair(source_dir, "t10k");
  const std::string name = "idx-" + source_stamp({train.images, train.labels, test.images, test.labels});
  return load_idx_named(cache_dir, train, test, name, warn);
}

TrainTest load_fashion_mnist(const std::string& cache_dir, const std::string& source_dir, const Warn& warn) {
  const std::string source = source_dir.empty() ? "/usr/share/datasets/fashion-mnist" : source_dir;
  if (!fs::exists(source + "/train-images-idx3-ubyte.gz"))
    throw DataError("Fashion-MNIST not found in " + source +
                    ": install Debian's package dataset-fashion-mnist (apt-get install dataset-fashion-mnist)"
                    " or set data.path");
  return load_idx_named(cache_dir, idx_pair(source, "train"), idx_pair(source, "t10k"), "fashion-mnist", warn);
}

TrainTest load_cifar10(const std::string& cache_dir, const std::string& source_dir, const Warn& warn) {
  std::vector<std::string> train;
  for (int i = 1; i <= 5; ++i) train.push_back(source_dir + "/data_batch_" + std::to_string(i) + ".bin");
  const std::vector<std::string> test{source_dir + "/test_batch.bin"};
  for (const auto& path : train)
    if (!fs::exists(path)) throw DataError(path + ": missing (CIFAR-10's binary version has data_batch_1.bin … 5 and test_batch.bin)");
  if (!fs::exists(test[0])) throw DataError(test[0] + ": missing");
  make_cache_dir(cache_dir);
  std::vector<std::string> all = train;
  all.push_back(test[0]);
  const std::string base = cache_dir + "/cifar10-" + source_stamp(all) + "-";
  return {cached(base + "train.sds", warn, [&] { return pack_cifar(train); }),
          cached(base + "test.sds", warn, [&] { return pack_cifar(test); })};
}

}  // namespace starling
