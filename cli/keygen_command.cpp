#include "cli/keygen_command.h"

#include "cli/config.h"
#include "gossip/peer_exchange.h"
#include "gossip/transport/zmq/curve_pairs.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <vector>

namespace starling::cli {

int run_keygen(const KeygenOptions& options) {
  std::vector<std::string> names;
  try {
    if (!options.config.empty()) {
      for (const auto& peer : load_config(options.config).peers) names.push_back(gossip::peer_key_name(peer.id));
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
    std::filesystem::create_directories(options.out);
    for (const auto& name : names) gossip::write_keypair(options.out, name, options.force);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  spdlog::info("wrote {} CURVE key pair(s) to {} (secret keys mode 0600: share only the .pub files)", names.size(),
               options.out);
  return 0;
}

}  // namespace starling::cli
