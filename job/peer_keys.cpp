#include "job/peer_keys.h"

#include "gossip/peer_exchange.h"
#include "gossip/transport/zmq/curve_pairs.h"

#include <filesystem>

namespace starling::job {

std::vector<std::string> peer_key_names(const Config& config) {
  std::vector<std::string> names;
  for (const PeerEntry& peer : config.peers) names.push_back(gossip::peer_key_name(peer.id));
  return names;
}

void write_key_pairs(const std::string& dir, const std::vector<std::string>& names, bool overwrite) {
  std::filesystem::create_directories(dir);
  for (const std::string& name : names) gossip::write_keypair(dir, name, overwrite);
}

}  // namespace starling::job
