// Text as byte tokens: what a folder contributes and what it skips, the validation split,
// the packed cache (round trip, corruption, rebuild, a changed source), the errors that name
// a path, the validation windows, the split across peers (iid, by-file, dirichlet) and the
// seeded training windows, on small files written here (Debian's fortunes: text_fortunes_test.cpp).
#define BOOST_TEST_MODULE learners_text_data
#include <boost/test/unit_test.hpp>

#include "learners/data/text_corpus.h"
#include "learners/data/text_partition.h"
#include "learners/data/text_sampler.h"
#include "learners/tasks/text_task.h"
#include "tests/temp_dir.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

using namespace starling;
namespace fs = std::filesystem;
using starling::testing::TempDir;

namespace {

std::string text_of(std::size_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(bytes, ' ');
  for (char& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

const Warn kQuiet = [](const std::string&) {};

// A corpus of files of the given sizes, fraction 0.1.
TextCorpus corpus_of(const TempDir& dir, const std::vector<std::size_t>& sizes) {
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    paths.push_back(dir.file("f" + std::to_string(10 + i)));
    write(paths.back(), text_of(sizes[i], static_cast<uint32_t>(i)));
  }
  return TextCorpus::from_files(paths, 0.1);
}

bool throws_naming(const std::function<void()>& f, const std::string& name) {
  try {
    f();
  } catch (const DataError& e) {
    return std::string(e.what()).find(name) != std::string::npos;
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_folder_reads_its_regular_files_in_name_order_and_says_what_it_skips) {
  TempDir dir;
  write(dir.file("b"), "bbbb");
  write(dir.file("a"), "aaaa");
  write(dir.file(".hidden"), "x");
  write(dir.file("a.dat"), "index");
  fs::create_symlink(dir.file("a"), dir.file("a.u8"));
  fs::create_directory(dir.file("sub"));
  const TextListing l = list_text_files(dir.str());
  BOOST_TEST(l.files == std::vector<std::string>({dir.file("a"), dir.file("b")}), boost::test_tools::per_element());
  BOOST_REQUIRE(l.skipped.size() == 4u);
  BOOST_TEST(l.skipped[0].path == dir.file(".hidden"));
  BOOST_TEST(l.skipped[0].why == "hidden");
  BOOST_TEST(l.skipped[1].why == "a strfile index (.dat)");
  BOOST_TEST(l.skipped[2].why == "a symbolic link");
  BOOST_TEST(l.skipped[3].why == "a folder (folders are not read)");
  std::vector<std::string> said;
  load_text_corpus(dir.file("cache"), dir.str(), 0.0, [&](const std::string& w) { said.push_back(w); });
  BOOST_REQUIRE(said.size() == 1u);  // one line, counted by reason
  BOOST_TEST(said[0] == "text: " + dir.str() + ": 2 files read; skipped 4: 1 × a folder (folders are not read), "
                        "1 × a strfile index (.dat), 1 × a symbolic link, 1 × hidden");
  // A file given directly is read, whatever its name.
  BOOST_TEST(list_text_files(dir.file("a.dat")).files.size() == 1u);
}

BOOST_AUTO_TEST_CASE(each_file_keeps_its_last_tenth_for_validation) {
  TempDir dir;
  write(dir.file("one"), text_of(1000, 1));
  write(dir.file("two"), text_of(59, 2));
  const TextCorpus c = TextCorpus::from_files({dir.file("one"), dir.file("two")}, 0.1);
  BOOST_TEST(c.size() == 1059u);
  BOOST_TEST(c.files()[0].train_bytes == 900u);
  BOOST_TEST(c.files()[1].begin == 1000u);
  BOOST_TEST(c.files()[1].train_bytes == 54u);  // 59 - floor(5.9)
  BOOST_TEST(std::string(reinterpret_cast<const char*>(c.bytes()) + 1000, 59) == text_of(59, 2));
  BOOST_CHECK_THROW(TextCorpus::from_files({dir.file("one")}, 1.0), DataError);
  BOOST_CHECK_THROW(TextCorpus::from_files({dir.file("one")}, -0.1), DataError);

  const uint64_t starts[] = {3, 1001};
  std::vector<int32_t> tokens(2 * 4);
  c.gather(starts, 2, 4, tokens.data());
  for (int j = 0; j < 4; ++j) {
    BOOST_TEST(tokens[j] == static_cast<int32_t>(c.bytes()[3 + j]));
    BOOST_TEST(tokens[4 + j] == static_cast<int32_t>(c.bytes()[1001 + j]));
  }
}

BOOST_AUTO_TEST_CASE(the_packed_cache_round_trips_and_refuses_corruption) {
  TempDir dir;
  const TextCorpus c = corpus_of(dir, {300, 200, 700});
  c.write_packed(dir.file("c.stx"));
  const TextCorpus back = TextCorpus::open_packed(dir.file("c.stx"));
  BOOST_TEST(back.size() == c.size());
  BOOST_TEST(std::equal(c.bytes(), c.bytes() + c.size(), back.bytes()));
  BOOST_REQUIRE(back.files().size() == 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    BOOST_TEST(back.files()[i].path == c.files()[i].path);
    BOOST_TEST(back.files()[i].begin == c.files()[i].begin);
    BOOST_TEST(back.files()[i].train_bytes == c.files()[i].train_bytes);
  }
  const auto size = fs::file_size(dir.file("c.stx"));
  {
    std::fstream f(dir.file("c.stx"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 5));
    f.put('#');
  }
  BOOST_TEST(throws_naming([&] { TextCorpus::open_packed(dir.file("c.stx")); }, "checksum"));
  fs::resize_file(dir.file("c.stx"), size - 1);
  BOOST_TEST(throws_naming([&] { TextCorpus::open_packed(dir.file("c.stx")); }, "truncated"));
  write(dir.file("junk.stx"), std::string(100, 'x'));
  BOOST_TEST(throws_naming([&] { TextCorpus::open_packed(dir.file("junk.stx")); }, "not a Starling packed text"));
}

BOOST_AUTO_TEST_CASE(the_cache_is_reused_rebuilt_when_broken_and_renamed_when_the_text_changes) {
  TempDir dir;
  fs::create_directory(dir.file("text"));
  write(dir.file("text/a"), text_of(500, 1));
  const std::string cache = dir.file("cache");
  const TextCorpus first = load_text_corpus(cache, dir.file("text"), 0.1, kQuiet);
  std::vector<fs::path> packed;
  for (const auto& e : fs::directory_iterator(cache)) packed.push_back(e.path());
  BOOST_REQUIRE(packed.size() == 1u);
  write(packed[0].string(), "broken");
  std::vector<std::string> warnings;
  const TextCorpus rebuilt = load_text_corpus(cache, dir.file("text"), 0.1, [&](const std::string& w) { warnings.push_back(w); });
  BOOST_TEST(warnings.size() == 1u);
  BOOST_TEST(rebuilt.size() == 500u);
  // Another fraction or another text is another cache file.
  load_text_corpus(cache, dir.file("text"), 0.2, kQuiet);
  write(dir.file("text/b"), text_of(300, 2));
  const TextCorpus grown = load_text_corpus(cache, dir.file("text"), 0.1, kQuiet);
  BOOST_TEST(grown.size() == 800u);
  BOOST_TEST(std::distance(fs::directory_iterator(cache), fs::directory_iterator()) == 3);
}

BOOST_AUTO_TEST_CASE(missing_empty_and_short_text_are_errors_naming_the_path) {
  TempDir dir;
  BOOST_TEST(throws_naming([&] { list_text_files(dir.file("nowhere")); }, dir.file("nowhere")));
  fs::create_directory(dir.file("empty"));
  write(dir.file("empty/.hidden"), "x");
  BOOST_TEST(throws_naming([&] { list_text_files(dir.file("empty")); }, dir.file("empty")));
  BOOST_CHECK_THROW(list_text_files(""), DataError);

  write(dir.file("long"), text_of(1000, 1));
  write(dir.file("short"), text_of(60, 2));  // a training part of 54 bytes
  write(dir.file("void"), "");
  const TextCorpus c = TextCorpus::from_files({dir.file("long"), dir.file("short")}, 0.1);
  BOOST_CHECK_NO_THROW(check_windows(c, 54));
  BOOST_TEST(throws_naming([&] { check_windows(c, 55); }, dir.file("short")));
  const TextCorpus with_empty = TextCorpus::from_files({dir.file("long"), dir.file("void")}, 0.1);
  BOOST_TEST(throws_naming([&] { check_windows(with_empty, 2); }, dir.file("void")));
  // Training parts long enough, but no validation part holds a window.
  const TextCorpus no_validation = TextCorpus::from_files({dir.file("long")}, 0.0);
  BOOST_TEST(throws_naming([&] { check_windows(no_validation, 10); }, "validation"));
}

BOOST_AUTO_TEST_CASE(validation_windows_predict_every_validation_byte_once) {
  TempDir dir;
  const TextCorpus c = corpus_of(dir, {1000, 400, 80});  // validation parts of 100, 40 and 8 bytes
  const int window = 9;
  const auto starts = validation_windows(c, window);
  std::map<uint64_t, int> predicted;  // target byte -> times
  for (uint64_t s : starts) {
    const auto file = std::find_if(c.files().begin(), c.files().end(), [&](const TextFile& f) { return s >= f.begin && s < f.end(); });
    BOOST_REQUIRE(file != c.files().end());
    BOOST_TEST(s >= file->train_end());
    BOOST_TEST(s + window <= file->end());
    for (uint64_t t = s + 1; t < s + window; ++t) ++predicted[t];
  }
  for (const auto& [at, times] : predicted) BOOST_TEST(times == 1);
  // Every byte after a part's first is a target, but for a tail shorter than a window: 99 = 12·8 + 3
  // and 39 = 4·8 + 7 targets; the third part (8 bytes) holds no window.
  BOOST_TEST(starts.size() == 12u + 4u);
  BOOST_TEST(predicted.size() == (12u + 4u) * 8u);
}

BOOST_AUTO_TEST_CASE(iid_gives_every_peer_all_training_text) {
  TempDir dir;
  const TextCorpus c = corpus_of(dir, {300, 200, 700});
  PartitionSpec spec;
  const auto parts = partition_text(c, 3, spec);
  BOOST_REQUIRE(parts.size() == 3u);
  for (const TextPart& p : parts) {
    BOOST_REQUIRE(p.size() == 3u);
    for (uint32_t i = 0; i < 3; ++i) BOOST_TEST((p[i] == TextRange{c.files()[i].begin, c.files()[i].train_end(), i}));
  }
}

BOOST_AUTO_TEST_CASE(by_file_gives_each_peer_whole_files_near_evenly) {
  TempDir dir;
  const TextCorpus c = corpus_of(dir, {1000, 100, 500, 450, 300, 250});  // training 900, 90, 450, 405, 270, 225
  PartitionSpec spec;
  spec.kind = PartitionKind::by_file;
  const auto parts = partition_text(c, 3, spec);
  std::set<uint32_t> seen;
  std::vector<uint64_t> bytes;
  for (const TextPart& p : parts) {
    uint64_t sum = 0;
    for (const TextRange& r : p) {
      BOOST_TEST(seen.insert(r.file).second);  // disjoint
      BOOST_TEST((r == TextRange{c.files()[r.file].begin, c.files()[r.file].train_end(), r.file}));
      sum += r.end - r.begin;
    }
    bytes.push_back(sum);
  }
  BOOST_TEST(seen.size() == 6u);
  // Largest first to the lightest peer, the lower rank on a tie: 900 | 450, 225, 90 | 405, 270.
  BOOST_TEST(bytes == std::vector<uint64_t>({900, 765, 675}), boost::test_tools::per_element());
  BOOST_CHECK_THROW(partition_text(c, 7, spec), PartitionError);
}

BOOST_AUTO_TEST_CASE(dirichlet_cuts_each_file_among_the_peers_by_its_shares) {
  TempDir dir;
  const TextCorpus c = corpus_of(dir, {1000, 2000, 500, 3000});
  PartitionSpec spec;
  spec.kind = PartitionKind::dirichlet;
  spec.alpha = 0.3, spec.seed = 42;
  const auto parts = partition_text(c, 4, spec);
  BOOST_TEST((parts == partition_text(c, 4, spec)));  // a pure function
  const auto shares = dirichlet_shares(4, 4, spec.alpha, spec.seed);
  for (uint32_t file = 0; file < 4; ++file) {
    const TextFile& f = c.files()[file];
    uint64_t next = f.begin;  // the pieces tile the training part in peer order
    for (std::size_t peer = 0; peer < 4; ++peer)
      for (const TextRange& r : parts[peer]) {
        if (r.file != file) continue;
        BOOST_TEST(r.begin == next);
        next = r.end;
        BOOST_TEST(std::abs(static_cast<double>(r.end - r.begin) - shares[file][peer] * f.train_bytes) <= 1.0);
      }
    BOOST_TEST(next == f.train_end());
  }
  spec.kind = PartitionKind::shards;
  BOOST_CHECK_THROW(partition_text(c, 4, spec), PartitionError);
  spec.kind = PartitionKind::by_class;
  BOOST_CHECK_THROW(partition_text(c, 4, spec), PartitionError);
  BOOST_CHECK_THROW(partition(std::vector<uint8_t>{0, 1}, 2, 1, PartitionSpec{PartitionKind::by_file}), PartitionError);
}

BOOST_AUTO_TEST_CASE(windows_are_seeded_uniform_over_the_starts_and_stay_inside_their_range) {
  const TextPart part{{100, 119, 0}, {500, 539, 1}, {900, 905, 2}};  // 10, 30 and no starts of 10 bytes
  BOOST_TEST(window_starts(part, 10) == 40u);
  const WindowSampler a(part, 10, 7, 0), again(part, 10, 7, 0), other(part, 10, 7, 1);
  BOOST_TEST(a.starts() == 40u);
  const int n = 4000;
  std::vector<uint64_t> s(n), s_again(n), s_other(n);
  a.batch(3, n, s.data());
  again.batch(3, n, s_again.data());
  other.batch(3, n, s_other.data());
  BOOST_TEST(s == s_again);
  BOOST_TEST(s != s_other);
  std::vector<uint64_t> next(n);
  a.batch(4, n, next.data());
  BOOST_TEST(s != next);
  std::map<uint64_t, int> count;
  for (uint64_t start : s) {
    const bool first = start >= 100 && start + 10 <= 119, second = start >= 500 && start + 10 <= 539;
    BOOST_TEST((first || second));
    ++count[start];
  }
  BOOST_TEST(count.size() == 40u);  // every start drawn
  // Each start has probability 1/40: 100 expected, a standard deviation of about 9.9.
  for (const auto& [start, times] : count) BOOST_TEST((times > 55 && times < 145));
  BOOST_CHECK_THROW(WindowSampler(TextPart{{0, 5, 0}}, 10, 1), std::invalid_argument);
  BOOST_CHECK_THROW(WindowSampler(part, 1, 1), std::invalid_argument);
}

// The PyTorch references draw Starling's windows through bench/starling_sampling.py, which
// tests/cli/torch_ddp_text_end_to_end.sh checks against these same starts: a change here is
// a change there.
BOOST_AUTO_TEST_CASE(a_peers_windows_are_pinned) {
  const TextPart part{{100, 119, 0}, {500, 539, 1}, {900, 905, 2}};
  const WindowSampler peer3(part, 10, window_seed(7, 3), 0);  // learner 0's of seed 7, stream 3 (learners/tasks/text_task.h)
  std::vector<uint64_t> starts(6);
  peer3.batch(5, 6, starts.data());
  BOOST_TEST(starts == (std::vector<uint64_t>{529, 523, 506, 528, 515, 524}), boost::test_tools::per_element());
}
