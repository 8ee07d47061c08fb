#pragma once
// Subword tokenization with SentencePiece (BPE or unigram), set up to be lossless on any
// text: no normalisation, no dummy prefix, whitespace kept as written, and byte fallback, so
// that a character outside the vocabulary becomes its UTF-8 bytes as tokens. Every token id
// then stands for a fixed number of bytes of the text (token_bytes), which is what bits per
// byte divide by.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace starling {

struct TokenizerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The model types of SentencePiece's trainer that Starling offers.
inline constexpr const char* kTokenizerTypes[] = {"bpe", "unigram"};

class Tokenizer {
 public:
  /// Reads a SentencePiece model file; throws TokenizerError naming the file.
  static Tokenizer load(const std::string& path);

  int vocabulary() const { return static_cast<int>(token_bytes_.size()); }
  std::vector<int32_t> encode(std::string_view text) const;
  std::string decode(const std::vector<int32_t>& ids) const;
  /// The text of one id: its byte for a byte-fallback token, nothing for a control or
  /// unknown one, the piece (U+2581 read as the space it stands for) otherwise; a sequence's
  /// texts back to back are its decode.
  const std::string& token_text(int32_t id) const { return token_texts_.at(static_cast<std::size_t>(id)); }
  /// Bytes of text each id stands for: the sizes of token_text.
  const std::vector<uint32_t>& token_bytes() const { return token_bytes_; }

 private:
  std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor_;
  std::vector<std::string> token_texts_;
  std::vector<uint32_t> token_bytes_;
};

struct TokenizerTraining {
  std::string type = "bpe";  // one of kTokenizerTypes
  int vocabulary = 2048;     // ids, the unknown token and the 256 byte tokens included
  int threads = 1;
};

/// Trains a tokenizer on `texts` (each split into lines, SentencePiece's sentences) and
/// writes its model to `path` atomically. Throws TokenizerError with the trainer's reason
/// (e.g. a vocabulary the text cannot fill, or one below the 256 byte tokens).
void train_tokenizer(const std::vector<std::string_view>& texts, const TokenizerTraining& training,
                     const std::string& path);

}  // namespace starling
