#include "cli/generate_command.h"

#include "cli/config.h"
#include "job/exit_codes.h"
#include "job/tokenizer.h"
#include "job/trained_model.h"
#include "learners/tasks/text_sampling.h"

#include <cstdio>

namespace starling::cli {

using job::exit_code_of;
using job::load_trained_model;
using job::model_tokenizer;

int run_generate(const GenerateOptions& options) {
  return exit_code_of([&] {
    const Config config = load_config(options.config, options.overrides);
    const SamplingSpec sampling{options.bytes, options.temperature, options.seed, options.top_k, options.top_p, options.stop};
    try {
      check_sampling(sampling);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(std::string("--") + e.what());
    }
    const auto model = load_trained_model(config, options.checkpoint);
    const std::optional<Tokenizer> tokenizer = model_tokenizer(config, options.checkpoint);
    std::fwrite(options.prompt.data(), 1, options.prompt.size(), stdout);
    std::fflush(stdout);
    sample_text(*model, config.node.train.learner.backend, options.prompt, sampling, [](const std::string& bytes) {
      std::fwrite(bytes.data(), 1, bytes.size(), stdout);
      std::fflush(stdout);
    }, tokenizer ? &*tokenizer : nullptr);
    std::fputc('\n', stdout);
    return 0;
  });
}

}  // namespace starling::cli
