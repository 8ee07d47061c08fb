// IDX parsing, the packed dataset format (including truncated and corrupted files), the
// published formats' loaders and caches (IDX sets, Fashion-MNIST, CIFAR-10) on small files
// written here, broken ones included, and the sampler's determinism and sharding.
#define BOOST_TEST_MODULE learners_data
#include <boost/test/unit_test.hpp>

#include "learners/data/dataset_formats.h"
#include "learners/data/idx.h"
#include "learners/data/sampler.h"
#include "tests/temp_dir.h"

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <set>

using namespace starling;
namespace fs = std::filesystem;
using starling::testing::TempDir;

namespace {

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::vector<uint8_t> idx_bytes(std::vector<uint32_t> dims, uint8_t fill) {
  std::vector<uint8_t> out{0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  std::size_t total = 1;
  for (uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(d >> s));
    total *= d;
  }
  for (std::size_t i = 0; i < total; ++i) out.push_back(static_cast<uint8_t>((fill + i) % 10));
  return out;
}

void flip_byte(const std::string& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x5a));
}

}  // namespace

BOOST_AUTO_TEST_CASE(idx_reads_and_validates) {
  TempDir dir;
  write_gz(dir.file("ok.gz"), idx_bytes({3, 2, 2}, 1));
  const IdxArray a = read_idx(dir.file("ok.gz"), 3);
  BOOST_TEST(a.dims == std::vector<uint32_t>({3, 2, 2}), boost::test_tools::per_element());
  BOOST_TEST(a.data.size() == 12u);

  BOOST_CHECK_THROW(read_idx(dir.file("ok.gz"), 1), DataError);  // wrong rank
  BOOST_CHECK_THROW(read_idx(dir.file("missing.gz"), 3), DataError);
  auto truncated = idx_bytes({3, 2, 2}, 1);
  truncated.resize(truncated.size() - 3);
  write_gz(dir.file("short.gz"), truncated);
  BOOST_CHECK_THROW(read_idx(dir.file("short.gz"), 3), DataError);
  auto bad_magic = idx_bytes({4}, 0);
  bad_magic[2] = 0x0d;  // floats, not bytes
  write_gz(dir.file("magic.gz"), bad_magic);
  BOOST_CHECK_THROW(read_idx(dir.file("magic.gz"), 1), DataError);
  auto trailing = idx_bytes({4}, 0);
  trailing.push_back(7);
  write_gz(dir.file("long.gz"), trailing);
  BOOST_CHECK_THROW(read_idx(dir.file("long.gz"), 1), DataError);
}

BOOST_AUTO_TEST_CASE(packed_round_trip_and_corruption) {
  TempDir dir;
  const TrainTest synth = make_synthetic(50, 10, 3, Shape{4, 4, 1}, 3);
  synth.train.write_packed(dir.file("a.sds"));
  const Dataset back = Dataset::open_packed(dir.file("a.sds"));
  BOOST_TEST(back.size() == 50u);
  BOOST_TEST(back.classes() == 3);
  for (uint32_t i = 0; i < back.size(); ++i) {
    BOOST_TEST(back.label(i) == synth.train.label(i));
    BOOST_TEST(std::equal(back.pixels(i), back.pixels(i) + 16, synth.train.pixels(i)));
  }
  fs::copy_file(dir.file("a.sds"), dir.file("flipped.sds"));
  flip_byte(dir.file("flipped.sds"), 64 + 17 * 20 + 5);
  BOOST_CHECK_THROW(Dataset::open_packed(dir.file("flipped.sds")), DataError);
  fs::copy_file(dir.file("a.sds"), dir.file("short.sds"));
  fs::resize_file(dir.file("short.sds"), 64 + 17 * 49);
  BOOST_CHECK_THROW(Dataset::open_packed(dir.file("short.sds")), DataError);
  fs::copy_file(dir.file("a.sds"), dir.file("header.sds"));
  flip_byte(dir.file("header.sds"), 1);
  BOOST_CHECK_THROW(Dataset::open_packed(dir.file("header.sds")), DataError);
  std::ofstream(dir.file("tiny.sds")) << "STRL";
  BOOST_CHECK_THROW(Dataset::open_packed(dir.file("tiny.sds")), DataError);
}

BOOST_AUTO_TEST_CASE(fashion_mnist_cache_is_built_and_rebuilt_when_corrupt) {
  TempDir dir;
  const std::string source = dir.file("idx");
  fs::create_directories(source);
  write_gz(source + "/train-images-idx3-ubyte.gz", idx_bytes({20, 28, 28}, 0));
  write_gz(source + "/train-labels-idx1-ubyte.gz", idx_bytes({20}, 3));
  write_gz(source + "/t10k-images-idx3-ubyte.gz", idx_bytes({5, 28, 28}, 1));
  write_gz(source + "/t10k-labels-idx1-ubyte.gz", idx_bytes({5}, 4));
  std::vector<std::string> warnings;
  auto warn = [&](const std::string& m) { warnings.push_back(m); };
  const TrainTest first = load_fashion_mnist(dir.file("cache"), source, warn);
  BOOST_TEST(first.train.size() == 20u);
  BOOST_TEST(first.test.size() == 5u);
  BOOST_TEST(warnings.empty());

  flip_byte(dir.file("cache/fashion-mnist-train.sds"), 100);
  const TrainTest second = load_fashion_mnist(dir.file("cache"), source, warn);
  BOOST_TEST(warnings.size() == 1u);  // the corrupted cache was reported and rebuilt
  BOOST_TEST(second.train.label(7) == first.train.label(7));

  fs::remove(source + "/train-images-idx3-ubyte.gz");
  try {
    load_fashion_mnist(dir.file("cache2"), source, warn);
    BOOST_FAIL("missing data must throw");
  } catch (const DataError& e) {
    BOOST_TEST(std::string(e.what()).find("dataset-fashion-mnist") != std::string::npos);
  }
}

namespace {

void write_plain(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> idx_labels(const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> out = idx_bytes({static_cast<uint32_t>(labels.size())}, 0);
  std::copy(labels.begin(), labels.end(), out.end() - static_cast<std::ptrdiff_t>(labels.size()));
  return out;
}

// An IDX set of 12×14 images in `dir`, uncompressed, with labels 0..4 in training.
void write_idx_set(const std::string& dir) {
  fs::create_directories(dir);
  write_plain(dir + "/train-images-idx3-ubyte", idx_bytes({6, 12, 14}, 2));
  write_plain(dir + "/train-labels-idx1-ubyte", idx_labels({0, 4, 1, 3, 2, 1}));
  write_plain(dir + "/t10k-images-idx3-ubyte", idx_bytes({2, 12, 14}, 5));
  write_plain(dir + "/t10k-labels-idx1-ubyte", idx_labels({4, 0}));
}

template <typename F>
std::string data_error_of(F&& load) {
  try {
    load();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

const auto quiet = [](const std::string&) {};

}  // namespace

BOOST_AUTO_TEST_CASE(idx_set_takes_its_size_and_classes_from_the_files) {
  TempDir dir;
  write_idx_set(dir.file("set"));
  const TrainTest d = load_idx_set(dir.file("cache"), dir.file("set"), quiet);
  BOOST_TEST((d.train.shape() == Shape{12, 14, 1}));
  BOOST_TEST(d.train.classes() == 5);
  BOOST_TEST(d.test.classes() == 5);
  BOOST_TEST(d.train.size() == 6u);
  BOOST_TEST(d.train.label(1) == 4);
  BOOST_TEST(d.test.label(0) == 4);
  BOOST_TEST(d.train.pixels(1)[0] == (2 + 12 * 14) % 10);  // image 1's first byte
  int cached = 0;
  for (const auto& entry : fs::directory_iterator(dir.file("cache"))) cached += entry.path().extension() == ".sds";
  BOOST_TEST(cached == 2);

  // A changed source is converted again, under a name of its own.
  write_plain(dir.file("set") + "/train-labels-idx1-ubyte", idx_labels({0, 1, 1, 1, 1, 5}));
  const TrainTest changed = load_idx_set(dir.file("cache"), dir.file("set"), quiet);
  BOOST_TEST(changed.train.classes() == 6);
}

BOOST_AUTO_TEST_CASE(broken_idx_sets_name_the_file) {
  TempDir dir;
  const std::string set = dir.file("set");
  write_idx_set(set);
  fs::remove(set + "/t10k-labels-idx1-ubyte");
  std::string e = data_error_of([&] { load_idx_set(dir.file("c1"), set, quiet); });
  BOOST_TEST((e.find("t10k-labels-idx1-ubyte") != std::string::npos && e.find("missing") != std::string::npos), e);

  write_plain(set + "/t10k-labels-idx1-ubyte", idx_labels({4, 7}));  // 7: no such class in training
  e = data_error_of([&] { load_idx_set(dir.file("c2"), set, quiet); });
  BOOST_TEST((e.find("t10k-labels-idx1-ubyte") != std::string::npos && e.find("label 7") != std::string::npos), e);

  write_plain(set + "/t10k-labels-idx1-ubyte", idx_labels({4, 0, 1}));  // 3 labels for 2 images
  e = data_error_of([&] { load_idx_set(dir.file("c3"), set, quiet); });
  BOOST_TEST((e.find("t10k-images-idx3-ubyte") != std::string::npos && e.find("labels") != std::string::npos), e);

  std::vector<uint8_t> images = idx_bytes({6, 12, 14}, 2);
  images.resize(images.size() - 9);
  write_plain(set + "/train-images-idx3-ubyte", images);
  e = data_error_of([&] { load_idx_set(dir.file("c4"), set, quiet); });
  BOOST_TEST((e.find("train-images-idx3-ubyte") != std::string::npos && e.find("truncated") != std::string::npos), e);
}

namespace {

constexpr std::size_t kCifarRecord = 1 + 32 * 32 * 3;

// `count` CIFAR-10 records; record r has label (first + r) % 10, and channel c of pixel p
// holds (p + 50·c + r) mod 256.
std::vector<uint8_t> cifar_batch(int count, int first) {
  std::vector<uint8_t> out;
  for (int r = 0; r < count; ++r) {
    out.push_back(static_cast<uint8_t>((first + r) % 10));
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 1024; ++p) out.push_back(static_cast<uint8_t>((p + 50 * c + r) % 256));
  }
  return out;
}

void write_cifar(const std::string& dir) {
  fs::create_directories(dir);
  for (int i = 1; i <= 5; ++i) write_plain(dir + "/data_batch_" + std::to_string(i) + ".bin", cifar_batch(2, i));
  write_plain(dir + "/test_batch.bin", cifar_batch(3, 7));
}

}  // namespace

BOOST_AUTO_TEST_CASE(cifar10_batches_become_height_width_channel_records) {
  TempDir dir;
  write_cifar(dir.file("cifar"));
  const TrainTest d = load_cifar10(dir.file("cache"), dir.file("cifar"), quiet);
  BOOST_TEST(d.train.size() == 10u);
  BOOST_TEST(d.test.size() == 3u);
  BOOST_TEST((d.train.shape() == Shape{32, 32, 3}));
  BOOST_TEST(d.train.classes() == 10);
  BOOST_TEST(d.train.label(3) == 3);  // batch 2, record 1
  BOOST_TEST(d.test.label(2) == 9);
  const uint8_t* px = d.train.pixels(3);
  for (int p : {0, 1, 33, 1023})
    for (int c = 0; c < 3; ++c) BOOST_TEST(px[p * 3 + c] == (p + 50 * c + 1) % 256);
}

BOOST_AUTO_TEST_CASE(broken_cifar10_files_name_the_file) {
  TempDir dir;
  const std::string set = dir.file("cifar");
  write_cifar(set);
  std::vector<uint8_t> batch = cifar_batch(2, 0);
  batch.resize(kCifarRecord + 100);
  write_plain(set + "/data_batch_4.bin", batch);
  std::string e = data_error_of([&] { load_cifar10(dir.file("c1"), set, quiet); });
  BOOST_TEST((e.find("data_batch_4.bin") != std::string::npos && e.find("truncated") != std::string::npos), e);

  batch = cifar_batch(2, 0);
  batch[kCifarRecord] = 12;  // the second record's label
  write_plain(set + "/data_batch_4.bin", batch);
  e = data_error_of([&] { load_cifar10(dir.file("c2"), set, quiet); });
  BOOST_TEST((e.find("data_batch_4.bin") != std::string::npos && e.find("label 12") != std::string::npos), e);

  fs::remove(set + "/data_batch_3.bin");
  e = data_error_of([&] { load_cifar10(dir.file("c3"), set, quiet); });
  BOOST_TEST((e.find("data_batch_3.bin") != std::string::npos && e.find("missing") != std::string::npos), e);
}

BOOST_AUTO_TEST_CASE(gather_normalises) {
  const TrainTest synth = make_synthetic(200, 10, 3, Shape{4, 4, 1}, 3);
  std::vector<uint32_t> all(200);
  for (uint32_t i = 0; i < 200; ++i) all[i] = i;
  std::vector<float> x(200 * 16);
  std::vector<int32_t> y(200);
  synth.train.gather(all.data(), 200, x.data(), y.data());
  double sum = 0, sq = 0;
  for (float v : x) sum += v, sq += double(v) * v;
  BOOST_TEST(sum / x.size() == 0.0, boost::test_tools::tolerance(1e-3));
  BOOST_TEST(sq / x.size() == 1.0, boost::test_tools::tolerance(1e-2));
}

BOOST_AUTO_TEST_CASE(sampler_is_deterministic_and_shards_partition) {
  Sampler a(103, 9), b(103, 9);
  BOOST_TEST(a.epoch(2) == b.epoch(2), boost::test_tools::per_element());
  const auto first = a.epoch(0);
  BOOST_TEST(first != a.epoch(1));  // reshuffled each epoch

  std::multiset<uint32_t> seen;
  for (int shard = 0; shard < 4; ++shard) {
    Sampler s(103, 9, shard, 4);
    const auto& idx = s.epoch(5);
    BOOST_TEST(idx.size() == s.shard_size());
    seen.insert(idx.begin(), idx.end());
  }
  BOOST_TEST(seen.size() == 103u);
  BOOST_TEST(std::set<uint32_t>(seen.begin(), seen.end()).size() == 103u);
  BOOST_CHECK_THROW(Sampler(10, 1, 4, 4), std::invalid_argument);
}
