#pragma once
// `starling generate`: prints a sample from a language model (cli/trained_model.h: a
// checkpoint of `starling train`, or a safetensors file with nanoGPT's names), streaming the
// prompt and then each byte as it is drawn; with data.tokenizer = "sentencepiece", each
// token's text (job/tokenizer.h: the tokenizer beside a safetensors file, or the config's).
#include <cstdint>
#include <string>
#include <vector>

namespace starling::cli {

struct GenerateOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string checkpoint;  // empty: the newest valid one in the config's run.checkpoint_dir
  std::string prompt;
  int bytes = 256;  // with a tokenizer: tokens
  double temperature = 0.8;
  uint64_t seed = 1;
  int top_k = 0;       // 0: off
  double top_p = 1.0;  // 1: off
  std::string stop;    // empty: never
};

/// Returns the exit code: 0 printed, 1 an unreadable checkpoint, 2 a bad configuration or
/// option, or a file of another model.
int run_generate(const GenerateOptions& options);

}  // namespace starling::cli
