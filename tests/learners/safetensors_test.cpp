// The safetensors format (learners/models/safetensors.h): a round trip, F16/BF16 read as float, and
// every malformed file refused with a message naming the fault; a GPT under nanoGPT's names
// (learners/models/nanogpt_weights.h): its layout covers the arena, a round trip restores every
// parameter, and a file with a missing, extra, mis-shaped or untied tensor is refused naming
// it; sampling's top-k, top-p and stop string (learners/tasks/text_sampling.h).
#define BOOST_TEST_MODULE learners_safetensors
#include <boost/test/unit_test.hpp>

#include "learners/models/gpt.h"
#include "learners/models/nanogpt_weights.h"
#include "learners/models/safetensors.h"
#include "learners/tasks/text_sampling.h"

#include "tests/temp_dir.h"

#include <cstring>
#include <fstream>

using namespace starling;
using starling::testing::TempDir;

namespace {

// A file of `header` (JSON) and `data` bytes, with `length` as the header length field.
std::string raw_file(const TempDir& dir, const std::string& header, const std::string& data, uint64_t length) {
  const std::string path = dir.file("raw.safetensors");
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>(length >> (8 * i)));
  out << header << data;
  return path;
}

std::string raw_file(const TempDir& dir, const std::string& header, const std::string& data) {
  return raw_file(dir, header, data, header.size());
}

// read_safetensors(path) fails with a message containing `needle`.
void expect_refused(const std::string& path, const std::string& needle) {
  try {
    read_safetensors(path);
    BOOST_ERROR("accepted a file that should fail with: " + needle);
  } catch (const SafetensorsError& e) {
    BOOST_TEST_INFO("message: " << e.what());
    BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos);
  }
}

ModelSpec tiny_gpt() {
  ModelSpec m;
  m.kind = "gpt";
  m.blocks = 2, m.heads = 2, m.width = 16, m.context = 8, m.classes = 256;
  m.input = {1, 8, 1};
  return m;
}

std::string four_bytes(float f) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &f, 4);  // this host is little-endian, as the format
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(round_trip_keeps_names_shapes_values_and_metadata) {
  TempDir dir("safetensors");
  TensorFile file;
  file.tensors = {{"a.weight", {2, 3}, {1, -2, 3.5f, 0, 1e-20f, -7}}, {"scalar", {}, {42}}, {"empty", {0, 4}, {}}};
  file.metadata = {{"format", "pt"}, {"note", "x"}};
  write_safetensors(dir.file("m.safetensors"), file);
  const TensorFile back = read_safetensors(dir.file("m.safetensors"));
  BOOST_TEST(back.metadata == file.metadata);
  BOOST_TEST(back.tensors.size() == 3u);
  for (const NamedTensor& t : file.tensors) {
    const NamedTensor* r = back.find(t.name);
    BOOST_REQUIRE(r);
    BOOST_TEST(r->shape == t.shape);
    BOOST_TEST(r->values == t.values);
  }
  std::ifstream in(dir.file("m.safetensors"), std::ios::binary);
  uint64_t length = 0;
  in.read(reinterpret_cast<char*>(&length), 8);
  BOOST_TEST(length % 8 == 0u);  // the data starts aligned
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16_read_as_float) {
  TempDir dir("safetensors");
  // F16 1.0 = 0x3c00, -2.0 = 0xc000, the smallest subnormal 0x0001 = 2^-24; BF16 1.5 = 0x3fc0.
  const std::string data = std::string("\x00\x3c\x00\xc0\x01\x00", 6) + std::string("\xc0\x3f", 2);
  const std::string header =
      R"({"h":{"dtype":"F16","shape":[3],"data_offsets":[0,6]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[6,8]}})";
  const TensorFile f = read_safetensors(raw_file(dir, header, data));
  BOOST_TEST(f.find("h")->values == (std::vector<float>{1.f, -2.f, 0x1p-24f}));
  BOOST_TEST(f.find("b")->values == std::vector<float>{1.5f});
}

BOOST_AUTO_TEST_CASE(malformed_files_are_refused_naming_the_fault) {
  TempDir dir("safetensors");
  const std::string two = four_bytes(1) + four_bytes(2);
  const std::string ok = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  BOOST_REQUIRE_NO_THROW(read_safetensors(raw_file(dir, ok, two)));
  expect_refused(raw_file(dir, "", "", 0) + "", "not a JSON object");
  expect_refused(raw_file(dir, ok, two, uint64_t{1} << 40), "above the limit");
  expect_refused(raw_file(dir, ok, two, ok.size() + 100), "truncated");
  expect_refused(raw_file(dir, ok, two.substr(0, 6)), "outside");
  expect_refused(raw_file(dir, ok, two + "xx"), "after the last tensor");
  expect_refused(raw_file(dir, "{\"t\":", two), "not a JSON object");
  expect_refused(raw_file(dir, R"({"t":{"dtype":"I8","shape":[8],"data_offsets":[0,8]}})", two), "dtype I8");
  expect_refused(raw_file(dir, R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", two), "shape needs 3");
  expect_refused(raw_file(dir, R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", two), "negative");
  expect_refused(raw_file(dir, R"({"t":{"dtype":"F32","shape":[2]}})", two), "needs dtype, shape and data_offsets");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", two),
                 "inside another tensor");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", two), "hole");
  expect_refused(raw_file(dir, R"({"__metadata__":{"k":1},"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", two),
                 "__metadata__.k");
  std::ofstream(dir.file("short.safetensors")) << "abc";
  expect_refused(dir.file("short.safetensors"), "shorter than");
  expect_refused(dir.file("absent.safetensors"), "cannot open");
}

BOOST_AUTO_TEST_CASE(gpt_layout_covers_the_arena_and_round_trips) {
  Model model(tiny_gpt());
  model.init(7);
  const std::vector<GptTensor> tensors = nanogpt_tensors(gpt_spec(model.spec()));
  BOOST_TEST(tensors.size() == 2 + 12 * 2 + 2u);
  std::size_t end = 0;
  for (const GptTensor& t : tensors) {
    std::size_t n = 1;
    for (int64_t d : t.shape) n *= static_cast<std::size_t>(d);
    BOOST_TEST(t.offset >= end);  // in arena order, never overlapping
    end = t.offset + n;
  }
  BOOST_TEST((end + 15) / 16 * 16 == model.param_count());
  BOOST_TEST(model.trainable_count() == [&] {
    std::size_t total = 0;
    for (const GptTensor& t : tensors) {
      std::size_t n = 1;
      for (int64_t d : t.shape) n *= static_cast<std::size_t>(d);
      total += n;
    }
    return total;
  }());

  TensorFile file = export_nanogpt(model);
  BOOST_TEST(file.find("lm_head.weight")->values == file.find("transformer.wte.weight")->values);
  BOOST_TEST(file.find("transformer.h.1.attn.c_attn.weight")->shape == (std::vector<int64_t>{48, 16}));
  BOOST_TEST(file.find("transformer.h.0.mlp.c_proj.weight")->shape == (std::vector<int64_t>{16, 64}));
  BOOST_TEST(file.metadata.at("n_layer") == "2");
  Model copy(tiny_gpt());
  import_nanogpt(file, copy);
  BOOST_TEST(std::equal(model.params(), model.params() + model.param_count(), copy.params()));
}

BOOST_AUTO_TEST_CASE(a_file_of_another_model_is_refused_naming_the_tensor) {
  Model model(tiny_gpt());
  model.init(3);
  const TensorFile good = export_nanogpt(model);
  const auto refused = [&](TensorFile file, const std::string& needle) {
    try {
      import_nanogpt(file, model);
      BOOST_ERROR("accepted: " + needle);
    } catch (const SafetensorsError& e) {
      BOOST_TEST_INFO("message: " << e.what());
      BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos);
    }
  };
  TensorFile missing = good;
  missing.tensors.erase(missing.tensors.begin() + 3);
  refused(missing, "'" + good.tensors[3].name + "': missing");
  TensorFile extra = good;
  extra.tensors.push_back({"transformer.h.9.ln_1.weight", {16}, std::vector<float>(16)});
  refused(extra, "'transformer.h.9.ln_1.weight': not a tensor");
  TensorFile shaped = good;
  for (NamedTensor& t : shaped.tensors)
    if (t.name == "transformer.wpe.weight") t.shape = {16, 8};
  refused(shaped, "'transformer.wpe.weight': shape [16, 8]");
  TensorFile untied = good;
  for (NamedTensor& t : untied.tensors)
    if (t.name == "lm_head.weight") t.values[0] += 1.f;
  refused(untied, "'lm_head.weight': differs");
  TensorFile masked = good;  // older nanoGPT saves its causal mask as a buffer
  masked.tensors.push_back({"transformer.h.0.attn.bias", {1, 1, 8, 8}, std::vector<float>(64, 1.f)});
  BOOST_CHECK_NO_THROW(import_nanogpt(masked, model));

  ModelSpec mlp;
  Model not_gpt(mlp);
  BOOST_CHECK_THROW(export_nanogpt(not_gpt), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(sampling_cuts_and_stops) {
  Model model(tiny_gpt());
  model.init(11);
  const auto backend = kernels::Backend::native;
  SamplingSpec greedy{40, 0.0, 1};
  const std::string best = sample_text(model, backend, "ab", greedy);
  SamplingSpec k1{40, 1.5, 5, 1, 1.0, ""};
  BOOST_TEST(sample_text(model, backend, "ab", k1) == best);  // top-1 is the argmax
  SamplingSpec p_tiny{40, 1.5, 5, 0, 1e-9, ""};
  BOOST_TEST(sample_text(model, backend, "ab", p_tiny) == best);  // the nucleus is the argmax alone
  SamplingSpec wide{200, 2.0, 9, 0, 1.0, ""};
  const std::string free_text = sample_text(model, backend, "ab", wide);
  BOOST_REQUIRE(free_text.size() == 200u);
  const std::string stop = free_text.substr(120, 3);
  SamplingSpec stopping = wide;
  stopping.stop = stop;
  std::string streamed;
  const std::string cut = sample_text(model, backend, "ab", stopping, [&](const std::string& s) { streamed += s; });
  BOOST_TEST(cut == free_text.substr(0, free_text.find(stop)));  // the same draws, ended before the stop
  BOOST_TEST(streamed == cut);
  BOOST_CHECK_THROW(check_sampling({1, 1.0, 1, -1, 1.0, ""}), std::invalid_argument);
  BOOST_CHECK_THROW(check_sampling({1, 1.0, 1, 0, 0.0, ""}), std::invalid_argument);
  BOOST_CHECK_THROW(check_sampling({1, 1.0, 1, 0, 1.5, ""}), std::invalid_argument);
}
