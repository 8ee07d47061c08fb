// SentencePiece behind Starling's tokenizer contract (learners/data/tokenizer.h).
#include "learners/data/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <unordered_map>

namespace starling {
namespace {

// SentencePiece's stand-in for a space.
constexpr std::string_view kSpaceMark = "\xe2\x96\x81";

std::string piece_text(const sentencepiece::SentencePieceProcessor& sp, int id) {
  if (sp.IsControl(id) || sp.IsUnknown(id)) return "";
  const std::string& piece = sp.IdToPiece(id);
  if (sp.IsByte(id)) return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));  // "<0xNN>"
  std::string text;
  for (std::size_t at = 0; at < piece.size();) {
    const bool space = piece.compare(at, kSpaceMark.size(), kSpaceMark) == 0;
    text += space ? ' ' : piece[at];
    at += space ? kSpaceMark.size() : 1;
  }
  return text;
}

// The lines of the texts, one SentencePiece sentence each (empty lines skipped).
class Lines final : public sentencepiece::SentenceIterator {
 public:
  explicit Lines(const std::vector<std::string_view>& texts) : texts_(texts) { find(); }
  bool done() const override { return text_ >= texts_.size(); }
  void Next() override {
    at_ = end_ + 1;
    find();
  }
  const std::string& value() const override { return line_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  // The next non-empty line from at_ on, across texts.
  void find() {
    for (; text_ < texts_.size(); ++text_, at_ = 0) {
      const std::string_view t = texts_[text_];
      while (at_ < t.size()) {
        end_ = t.find('\n', at_);
        if (end_ == std::string_view::npos) end_ = t.size();
        if (end_ > at_) {
          line_.assign(t.substr(at_, end_ - at_));
          return;
        }
        at_ = end_ + 1;
      }
    }
  }
  const std::vector<std::string_view>& texts_;
  std::size_t text_ = 0, at_ = 0, end_ = 0;
  std::string line_;
};

}  // namespace

Tokenizer Tokenizer::load(const std::string& path) {
  auto sp = std::make_shared<sentencepiece::SentencePieceProcessor>();
  if (const auto status = sp->Load(path); !status.ok())
    throw TokenizerError(path + ": not a SentencePiece model: " + status.ToString());
  Tokenizer t;
  for (int id = 0; id < sp->GetPieceSize(); ++id) {
    t.token_texts_.push_back(piece_text(*sp, id));
    t.token_bytes_.push_back(static_cast<uint32_t>(t.token_texts_.back().size()));
  }
  t.processor_ = std::move(sp);
  return t;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  if (const auto status = processor_->Encode(text, &ids); !status.ok())
    throw TokenizerError("tokenizer: cannot encode: " + status.ToString());
  return {ids.begin(), ids.end()};
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  for (int32_t id : ids)
    if (id < 0 || id >= vocabulary()) throw TokenizerError("tokenizer: id " + std::to_string(id) + " outside the vocabulary");
  if (const auto status = processor_->Decode(std::vector<int>(ids.begin(), ids.end()), &text); !status.ok())
    throw TokenizerError("tokenizer: cannot decode: " + status.ToString());
  return text;
}

void train_tokenizer(const std::vector<std::string_view>& texts, const TokenizerTraining& training,
                     const std::string& path) {
  const std::unordered_map<std::string, std::string> options{
      {"model_type", training.type},
      {"vocab_size", std::to_string(training.vocabulary)},
      {"character_coverage", "1.0"},
      {"byte_fallback", "true"},
      {"normalization_rule_name", "identity"},
      {"add_dummy_prefix", "false"},
      {"remove_extra_whitespaces", "false"},
      {"split_digits", "false"},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"num_threads", std::to_string(training.threads)},
      {"minloglevel", "2"},
  };
  Lines lines(texts);
  std::string model;
  if (const auto status = sentencepiece::SentencePieceTrainer::Train(options, &lines, &model); !status.ok())
    throw TokenizerError("tokenizer training: " + status.ToString());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(model.data(), static_cast<std::streamsize>(model.size()));
    if (!out.flush()) throw TokenizerError(path + ": cannot write the tokenizer model");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw TokenizerError(path + ": cannot write the tokenizer model");
  }
}

}  // namespace starling
