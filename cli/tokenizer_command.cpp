#include "cli/tokenizer_command.h"

#include "cli/config.h"
#include "job/data_source.h"
#include "job/exit_codes.h"
#include "job/tokenizer.h"

namespace starling::cli {

int run_tokenizer_train(const TokenizerOptions& options) {
  return job::exit_code_of([&] {
    const Config config = load_config(options.config, options.overrides);
    job::train_job_tokenizer(config, job::load_text_bytes(config));
    return 0;
  });
}

}  // namespace starling::cli
