// IDX parsing, the packed dataset format (including truncated and corrupted files), the
// Fashion-MNIST cache, and the sampler's determinism and sharding.
#define BOOST_TEST_MODULE learners_data
#include <boost/test/unit_test.hpp>

#include "learners/dataset.h"
#include "learners/idx.h"
#include "learners/sampler.h"
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
