#include "cli/export_command.h"

#include "cli/config.h"
#include "job/exit_codes.h"
#include "job/tokenizer.h"
#include "job/trained_model.h"
#include "learners/models/nanogpt_weights.h"

#include <filesystem>

namespace starling::cli {

using job::exit_code_of;
using job::load_trained_model;
using job::model_tokenizer;
using job::model_tokenizer_path;
using job::tokenizer_beside;

int run_export(const ExportOptions& options) {
  return exit_code_of([&] {
    if (options.format != "safetensors") throw ConfigError("--format: " + options.format + " is not one of: safetensors");
    const Config config = load_config(options.config, options.overrides);
    const auto model = load_trained_model(config, options.checkpoint);
    TensorFile file;
    try {
      file = export_nanogpt(*model);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(config.source + ": model.kind: " + e.what());
    }
    file.metadata["tokenizer"] = config.data.tokenizer;
    if (const std::optional<Tokenizer> tokenizer = model_tokenizer(config, options.checkpoint)) {
      const std::string beside = tokenizer_beside(options.out);
      std::filesystem::copy_file(model_tokenizer_path(config, options.checkpoint), beside, std::filesystem::copy_options::overwrite_existing);
      file.metadata["tokenizer_model"] = std::filesystem::path(beside).filename().string();
      spdlog::info("wrote the tokenizer ({} tokens) to {}", tokenizer->vocabulary(), beside);
    }
    file.metadata["starling_config"] = resolved_config(options.config, options.overrides, false);
    write_safetensors(options.out, file);
    spdlog::info("wrote {} tensors ({} parameters) to {}", file.tensors.size(), model->trainable_count(), options.out);
    return 0;
  });
}

}  // namespace starling::cli
