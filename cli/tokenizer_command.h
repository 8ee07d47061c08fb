#pragma once
// `starling tokenizer train`: trains the config's subword tokenizer (job/tokenizer.h) again,
// on the job's training split, and writes it to data.tokenizer_model.
#include <string>
#include <vector>

namespace starling::cli {

struct TokenizerOptions {
  std::string config;
  std::vector<std::string> overrides;
};

/// 0 written, 2 a bad config or a vocabulary the text cannot fill.
int run_tokenizer_train(const TokenizerOptions& options);

}  // namespace starling::cli
