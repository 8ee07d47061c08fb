#include "cli/config_command.h"

#include "cli/config.h"
#include "cli/config_schema_doc.h"
#include "job/exit_codes.h"

#include <iostream>

namespace starling::cli {

using job::exit_code_of;

int run_config(const ConfigOptions& options) {
  return exit_code_of([&] {
    if (options.schema) std::cout << (options.json ? schema_json() : schema_markdown());
    else if (options.config.empty()) throw ConfigError("config: expected --config FILE or --schema");
    else std::cout << resolved_config(options.config, options.overrides, options.json) << "\n";
    return 0;
  });
}

}  // namespace starling::cli
