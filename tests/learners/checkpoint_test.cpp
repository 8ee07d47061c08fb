// The checkpoint file format and folder: round trip, a corrupted (bad CRC) or truncated
// newest file skipped for the previous valid one, another run's checkpoint refused with what
// differs, atomic writes that leave no partial file, keeping the newest few; and a learner
// saved and restored continues exactly (SGD with momentum, Adam with its step count).
#define BOOST_TEST_MODULE learners_checkpoint
#include <boost/test/unit_test.hpp>

#include "learners/checkpoints/checkpoint.h"
#include "learners/replicas/learner.h"
#include "learners/tasks/image_task.h"

#include "tests/temp_dir.h"

#include <filesystem>
#include <fstream>

using namespace starling;
namespace fs = std::filesystem;

using starling::testing::TempDir;

namespace {

const Fingerprint kPrint{{"model", "mlp 12x12x1|dense|4"}, {"learners", "2"}};

Checkpoint sample(uint64_t step) {
  Checkpoint c;
  c.step = step;
  c.fingerprint = kPrint;
  const std::vector<float> z{1.f, -2.5f, 3.25f, static_cast<float>(step)};
  c.add("central", SectionWriter().floats(z.data(), z.size()).take());
  c.add("node", SectionWriter().put<int64_t>(static_cast<int64_t>(step)).put<double>(0.5).text("log line").take());
  return c;
}

std::vector<std::string> warnings;
void collect(const std::string& line) { warnings.push_back(line); }

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// With checkpoints 5 and 10 in `dir` and 10 damaged: 5 is found, with one warning that
// names 10 and says why.
void expect_previous_used(const TempDir& dir, const std::string& why) {
  warnings.clear();
  const auto found = find_newest_checkpoint(dir.str(), kPrint, collect);
  BOOST_REQUIRE(found);
  BOOST_TEST(found->checkpoint.step == 5u);
  BOOST_REQUIRE(warnings.size() == 1u);
  BOOST_TEST(contains(warnings[0], "ckpt-000000010.starling"), warnings[0]);
  BOOST_TEST(contains(warnings[0], why), warnings[0]);
}

}  // namespace

BOOST_AUTO_TEST_CASE(round_trip) {
  TempDir dir("checkpoint");
  const std::string path = write_checkpoint(dir.str(), sample(1200));
  BOOST_TEST(fs::path(path).filename().string() == "ckpt-000001200.starling");
  const Checkpoint c = read_checkpoint(path);
  BOOST_TEST(c.step == 1200u);
  BOOST_TEST((c.fingerprint == kPrint));
  std::vector<float> z(4);
  SectionReader central = c.reader("central");
  central.floats(z.data(), z.size());
  central.finish();
  BOOST_TEST(z[2] == 3.25f);
  SectionReader node = c.reader("node");
  BOOST_TEST(node.get<int64_t>() == 1200);
  BOOST_TEST(node.get<double>() == 0.5);
  BOOST_TEST(node.text() == "log line");
  BOOST_TEST(node.at_end());
  BOOST_CHECK_THROW(c.reader("missing"), CheckpointError);
}

BOOST_AUTO_TEST_CASE(section_reader_refuses_other_layouts) {
  const Checkpoint c = sample(3);
  std::vector<float> wrong(5);
  SectionReader central = c.reader("central");
  BOOST_CHECK_THROW(central.floats(wrong.data(), wrong.size()), CheckpointError);  // 4 stored, 5 wanted
  SectionReader node = c.reader("node");
  node.get<int64_t>();
  BOOST_CHECK_THROW(node.finish(), CheckpointError);  // bytes left over
  node.get<double>();
  node.text();
  BOOST_CHECK_THROW(node.get<int32_t>(), CheckpointError);  // past the end
}

BOOST_AUTO_TEST_CASE(corrupted_newest_is_skipped_for_the_previous) {
  TempDir dir("checkpoint");
  write_checkpoint(dir.str(), sample(5));
  const std::string newest = write_checkpoint(dir.str(), sample(10));
  std::vector<uint8_t> bytes = read_bytes(newest);
  bytes[bytes.size() - 3] ^= 0x40;  // one flipped bit in the body
  write_bytes(newest, bytes);
  BOOST_CHECK_THROW(read_checkpoint(newest), CheckpointError);
  expect_previous_used(dir, "CRC");
}

BOOST_AUTO_TEST_CASE(truncated_newest_is_skipped_for_the_previous) {
  TempDir dir("checkpoint");
  write_checkpoint(dir.str(), sample(5));
  const std::string newest = write_checkpoint(dir.str(), sample(10));
  std::vector<uint8_t> bytes = read_bytes(newest);
  for (std::size_t keep : {bytes.size() - 1, std::size_t{20}, std::size_t{0}}) {
    write_bytes(newest, std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
    expect_previous_used(dir, "truncated");
  }
}

BOOST_AUTO_TEST_CASE(a_file_renamed_to_another_step_is_refused) {
  TempDir dir("checkpoint");
  const std::string path = write_checkpoint(dir.str(), sample(5));
  fs::rename(path, dir.path / checkpoint_file_name(50));
  BOOST_CHECK_THROW(read_checkpoint((dir.path / checkpoint_file_name(50)).string()), CheckpointError);
}

BOOST_AUTO_TEST_CASE(another_runs_checkpoint_is_refused_with_what_differs) {
  TempDir dir("checkpoint");
  write_checkpoint(dir.str(), sample(5));
  const Fingerprint other{{"model", "mlp 12x12x1|dense|4"}, {"learners", "3"}, {"rank", "1"}};
  try {
    find_newest_checkpoint(dir.str(), other, collect);
    BOOST_FAIL("a mismatched checkpoint must be refused");
  } catch (const CheckpointMismatch& e) {
    const std::string what = e.what();
    BOOST_TEST(contains(what, "ckpt-000000005.starling"), what);
    BOOST_TEST(contains(what, "learners: 2 in the checkpoint, 3 here"), what);
    BOOST_TEST(contains(what, "rank: (none) in the checkpoint, 1 here"), what);
    BOOST_TEST(!contains(what, "model"), what);
  }
}

BOOST_AUTO_TEST_CASE(no_checkpoint_is_no_checkpoint) {
  TempDir dir("checkpoint");
  BOOST_TEST(!find_newest_checkpoint(dir.str(), kPrint, collect));
  BOOST_TEST(!find_newest_checkpoint(dir.str() + "/missing", kPrint, collect));
}

BOOST_AUTO_TEST_CASE(atomic_write_leaves_no_partial_file) {
  TempDir dir("checkpoint");
  write_checkpoint(dir.str(), sample(5));
  BOOST_TEST(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}) == 1);  // no temporary

  // A writer killed mid-write leaves its hidden temporary: never listed, cleaned up on request.
  const fs::path partial = dir.path / (".ckpt-000000010.starling.tmp.99999");
  write_bytes(partial.string(), std::vector<uint8_t>(17, 0xab));
  BOOST_TEST(list_checkpoints(dir.str()).size() == 1u);
  BOOST_TEST(find_newest_checkpoint(dir.str(), kPrint, collect)->checkpoint.step == 5u);
  remove_partial_checkpoints(dir.str());
  BOOST_TEST(!fs::exists(partial));

  // A write that cannot complete (the name is taken by a folder) leaves nothing behind and
  // does not touch the checkpoints already there.
  fs::create_directories(dir.path / checkpoint_file_name(20) / "x");
  BOOST_CHECK_THROW(write_checkpoint(dir.str(), sample(20)), CheckpointError);
  for (const auto& e : fs::directory_iterator(dir.path))
    BOOST_TEST(!contains(e.path().filename().string(), ".tmp."), e.path().string());
  BOOST_TEST(read_checkpoint((dir.path / checkpoint_file_name(5)).string()).step == 5u);
}

BOOST_AUTO_TEST_CASE(keeps_the_newest_few) {
  TempDir dir("checkpoint");
  for (uint64_t step : {100, 200, 300, 400, 500, 600}) write_checkpoint(dir.str(), sample(step), 3);
  const auto left = list_checkpoints(dir.str());
  BOOST_REQUIRE(left.size() == 3u);
  BOOST_TEST(fs::path(left[0]).filename().string() == checkpoint_file_name(600));
  BOOST_TEST(fs::path(left[2]).filename().string() == checkpoint_file_name(400));
  // Steps past nine digits still sort by step.
  write_checkpoint(dir.str(), sample(1234567890123ull), 3);
  BOOST_TEST(fs::path(list_checkpoints(dir.str())[0]).filename().string() == "ckpt-1234567890123.starling");
}

LearnerSpec tiny_learner(const char* optimizer) {
  LearnerSpec spec;
  spec.model.hidden = {16};
  spec.model.input = {8, 8, 1};
  spec.model.classes = 3;
  spec.optimizer.kind = optimizer;
  if (std::string(optimizer) == "adamw") spec.optimizer.weight_decay = 0.1, spec.optimizer.clip_norm = 0.5;
  spec.batch = 16;
  spec.seed = 9;
  return spec;
}

BOOST_AUTO_TEST_CASE(a_restored_learner_continues_exactly) {
  const TrainTest data = make_synthetic(400, 50, 3, {8, 8, 1}, 3);
  const auto task = std::make_shared<const ImageTask>(data.train, data.test);
  for (const char* kind : {"sgd", "adam", "adamw"}) {
    const LearnerSpec spec = tiny_learner(kind);
    Learner straight(spec, task);
    for (int i = 0; i < 30; ++i) straight.step(0.01f);  // past an epoch boundary (25 steps)
    SectionWriter out;
    straight.save(out);
    const std::vector<uint8_t> saved = out.take();
    for (int i = 0; i < 30; ++i) straight.step(0.01f);

    Learner resumed(spec, task);
    SectionReader in(saved, "learner.0");
    resumed.restore(in);
    in.finish();
    for (int i = 0; i < 30; ++i) resumed.step(0.01f);
    BOOST_TEST_CONTEXT(kind) {
      BOOST_TEST(resumed.steps() == straight.steps());
      BOOST_TEST(checksum_hex(resumed.model().params(), resumed.model().param_count()) ==
                 checksum_hex(straight.model().params(), straight.model().param_count()));
    }
  }
  // Another optimizer's state does not fit.
  Learner sgd(tiny_learner("sgd"), task);
  SectionWriter out;
  sgd.save(out);
  const std::vector<uint8_t> saved = out.take();
  Learner adam(tiny_learner("adam"), task);
  SectionReader in(saved, "learner.0");
  BOOST_CHECK_THROW(adam.restore(in), CheckpointError);
}
