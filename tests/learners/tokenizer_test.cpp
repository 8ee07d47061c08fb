// The SentencePiece tokenizer (learners/data/tokenizer.h): lossless round trips of seen and unseen
// text (byte fallback), both model types, a vocabulary too small refused; and a tokenized
// corpus's bits-per-byte accounting (learners/data/text_corpus.h, text_task.h) against bytes
// counted by hand from SentencePiece's own decode.
#define BOOST_TEST_MODULE learners_tokenizer
#include <boost/test/unit_test.hpp>

#include "learners/data/tokenizer.h"
#include "learners/models/model.h"
#include "learners/tasks/loss.h"
#include "learners/tasks/text_task.h"
#include "tests/temp_dir.h"

#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace starling;
using starling::testing::TempDir;

namespace {

// Seeded lines of words, with tabs, repeated spaces, accents and empty lines.
std::string words_text(int lines, uint32_t seed) {
  const char* words[] = {"the", "star", "starling", "flies", "over", "fields", "café", "naïve", "at", "dawn", "and", "dusk",
                         "  twice", "\tonce", "3.14", "—"};
  std::mt19937 rng(seed);
  std::string text;
  for (int i = 0; i < lines; ++i) {
    const int n = static_cast<int>(rng() % 9);
    for (int w = 0; w < n; ++w) text += std::string(w ? " " : "") + words[rng() % std::size(words)];
    text += "\n";
  }
  return text;
}

Tokenizer trained(const TempDir& dir, const std::string& type, int vocabulary) {
  const std::string text = words_text(2000, 1);
  train_tokenizer({text}, {type, vocabulary, 1}, dir.file(type + ".model"));
  return Tokenizer::load(dir.file(type + ".model"));
}

std::string texts_of(const Tokenizer& t, const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += t.token_text(id);
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(round_trips_are_lossless) {
  TempDir dir("tokenizer");
  for (const char* type : kTokenizerTypes) {
    const Tokenizer t = trained(dir, type, 300);
    BOOST_TEST(t.vocabulary() == 300);
    const std::string unseen = "Starling says: 日本語 ☃\r\n  double  spaces\tand a tab\n\n" + words_text(50, 9);
    for (const std::string& text : {words_text(200, 1), unseen}) {
      const std::vector<int32_t> ids = t.encode(text);
      BOOST_TEST(t.decode(ids) == text, type);
      BOOST_TEST(texts_of(t, ids) == text, type);  // token_text agrees with SentencePiece's decode
      uint64_t bytes = 0;
      for (int32_t id : ids) bytes += t.token_bytes()[static_cast<std::size_t>(id)];
      BOOST_TEST(bytes == text.size(), type);
      BOOST_TEST(ids.size() < text.size(), type);  // subwords, not bytes
    }
  }
}

BOOST_AUTO_TEST_CASE(bad_models_and_vocabularies_are_errors) {
  TempDir dir("tokenizer");
  BOOST_CHECK_THROW(trained(dir, "bpe", 100), TokenizerError);  // below the 256 byte tokens
  BOOST_CHECK_THROW(Tokenizer::load(dir.file("missing.model")), TokenizerError);
  std::ofstream(dir.file("junk.model")) << "not a model";
  BOOST_CHECK_THROW(Tokenizer::load(dir.file("junk.model")), TokenizerError);
}

BOOST_AUTO_TEST_CASE(bits_per_byte_count_the_bytes_the_targets_cover) {
  TempDir dir("tokenizer");
  const Tokenizer t = trained(dir, "bpe", 300);
  std::vector<std::string> paths;
  for (uint32_t seed : {3u, 4u}) {
    paths.push_back(dir.file("text" + std::to_string(seed)));
    std::ofstream(paths.back(), std::ios::binary) << words_text(300, seed);
  }
  const TextCorpus bytes = TextCorpus::from_files(paths, 0.25);
  const TextCorpus tokens = TextCorpus::tokenized(bytes, t);
  BOOST_TEST(tokens.is_tokenized());
  BOOST_TEST(tokens.vocabulary() == 300);
  // Each part keeps its text: the tokens of a file's training part decode to its bytes.
  for (std::size_t f = 0; f < bytes.files().size(); ++f) {
    const TextFile &b = bytes.files()[f], &k = tokens.files()[f];
    std::vector<int32_t> train(k.train_bytes);
    const uint64_t start = k.begin;
    tokens.gather(&start, 1, static_cast<int>(k.train_bytes), train.data());
    BOOST_TEST(t.decode(train) == std::string(reinterpret_cast<const char*>(bytes.bytes() + b.begin), b.train_bytes));
    BOOST_TEST(tokens.bytes_covered(k.begin, k.train_end()) == b.train_bytes);
    BOOST_TEST(tokens.bytes_covered(k.train_end(), k.end()) == b.bytes - b.train_bytes);
  }
  // A window's targets (its tokens after the first) against SentencePiece's decode of them.
  const int window = 9;
  const std::vector<uint64_t> starts = validation_windows(tokens, window);
  BOOST_TEST(starts.size() > 10u);
  std::vector<int32_t> ids(window);
  double hand_bytes = 0;
  for (uint64_t s : starts) {
    tokens.gather(&s, 1, window, ids.data());
    const std::size_t by_hand = t.decode(std::vector<int32_t>(ids.begin() + 1, ids.end())).size();
    BOOST_TEST(target_bytes(tokens, s, window) == by_hand);
    hand_bytes += static_cast<double>(by_hand);
  }
  // The evaluation: the windows' summed nats over those bytes.
  ModelSpec spec;
  spec.kind = "gpt";
  spec.blocks = 1, spec.heads = 2, spec.width = 16, spec.context = window - 1;
  spec.input = {1, window - 1, 1};
  spec.classes = 300;
  Model model(spec);
  model.init(5);
  double nats = 0;
  std::vector<float> x(static_cast<std::size_t>(window - 1));
  std::vector<int32_t> targets(static_cast<std::size_t>(window - 1));
  for (uint64_t s : starts) {
    tokens.gather(&s, 1, window, ids.data());
    for (int i = 0; i + 1 < window; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(ids[static_cast<std::size_t>(i)]), targets[static_cast<std::size_t>(i)] = ids[static_cast<std::size_t>(i) + 1];
    nats += sequence_cross_entropy(1, window - 1, 300, model.forward(kernels::Backend::native, 1, x.data()), targets.data(), nullptr) *
            (window - 1);
  }
  const double loss = evaluate_text(model, kernels::Backend::native, tokens, 4).loss;
  BOOST_TEST(loss == nats / hand_bytes, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(loss > std::log(300.0) / 8);  // nats per byte of a near-uniform model over tokens of several bytes
}
