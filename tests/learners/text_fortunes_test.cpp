// Debian's fortunes as the shipped corpus: what the folder contributes (no strfile indexes,
// no .u8 links), its size, nanoGPT's CPU context fits every file, and a by-file split over
// eight peers leaves each plenty of windows. Without the package the test exits 77, which
// ctest reports as skipped (scripts/deps.sh installs it).
#define BOOST_TEST_MODULE learners_text_fortunes
#include <boost/test/unit_test.hpp>

#include "learners/data/text_corpus.h"
#include "learners/data/text_partition.h"
#include "tests/temp_dir.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

using namespace starling;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_CASE(debian_fortunes) {
  const std::string path = "/usr/share/games/fortunes";
  if (!fs::exists(path + "/cookie")) {
    std::printf("fortunes not installed (scripts/deps.sh installs it): skipped\n");
    std::fflush(stdout);
    std::_Exit(77);
  }
  const TextListing l = list_text_files(path);
  for (const std::string& f : l.files) {
    BOOST_TEST(fs::path(f).extension() != ".dat");
    BOOST_TEST(fs::path(f).extension() != ".u8");
  }
  BOOST_TEST(l.files.size() >= 40u);
  testing::TempDir dir;
  const TextCorpus c = load_text_corpus(dir.file("cache"), path, 0.1, [](const std::string&) {});
  BOOST_TEST(c.size() > 2000000u);
  BOOST_CHECK_NO_THROW(check_windows(c, 65));  // nanoGPT's CPU context of 64
  PartitionSpec spec;
  spec.kind = PartitionKind::by_file;
  for (const TextPart& p : partition_text(c, 8, spec)) BOOST_TEST(window_starts(p, 65) > 100000u);
}
