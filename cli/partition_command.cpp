#include "cli/partition_command.h"

#include "cli/config.h"
#include "job/data_source.h"
#include "job/exit_codes.h"
#include "job/task_kind.h"

#include <iostream>

namespace starling::cli {

using job::ensure_parent_dir;
using job::exit_code_of;
using job::task_kind;
using job::write_file_atomic;

int run_partition(const PartitionOptions& options) {
  return exit_code_of([&] {
    Config config = load_config(options.config, options.overrides);
    const std::string text = task_kind(config.data).describe_split(config).str() + "\n";
    if (options.out.empty()) {
      std::cout << text << std::flush;
      return std::cout ? 0 : 1;
    }
    ensure_parent_dir(options.out);
    write_file_atomic(options.out, text);
    return 0;
  });
}

}  // namespace starling::cli
