#pragma once
// `starling export`: writes a trained GPT (cli/trained_model.h) as safetensors with
// nanoGPT's parameter names and shapes (learners/models/nanogpt_weights.h), so that PyTorch's
// GPT.load_state_dict takes it. The file's metadata holds nanoGPT's hyper-parameters, the
// tokenizer ("bytes": token ids are bytes; "sentencepiece": its model copied beside the file,
// m.safetensors → m.tokenizer.model, named by "tokenizer_model") and the config resolved as TOML.
#include <string>
#include <vector>

namespace starling::cli {

struct ExportOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string checkpoint;  // empty: the newest in run.checkpoint_dir
  std::string format = "safetensors";
  std::string out;
};

/// Returns the exit code: 0 written, 1 an unreadable checkpoint or an unwritable file, 2 a
/// bad configuration, format or a file of another model.
int run_export(const ExportOptions& options);

}  // namespace starling::cli
