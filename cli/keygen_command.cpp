#include "cli/keygen_command.h"

#include "cli/config.h"
#include "job/peer_keys.h"

#include <spdlog/spdlog.h>

#include <vector>

namespace starling::cli {

int run_keygen(const KeygenOptions& options) {
  std::vector<std::string> names;
  try {
    if (!options.config.empty()) {
      names = job::peer_key_names(load_config(options.config));
      if (names.empty()) throw ConfigError(options.config + ": no [[peer]] entries to make keys for");
    } else if (!options.name.empty()) {
      names.push_back(options.name);
    } else {
      throw ConfigError("starling keygen: give --config (a pair per peer) or --name");
    }
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return 2;
  }
  try {
    job::write_key_pairs(options.out, names, options.force);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  spdlog::info("wrote {} CURVE key pair(s) to {} (secret keys mode 0600: share only the .pub files)", names.size(),
               options.out);
  return 0;
}

}  // namespace starling::cli
