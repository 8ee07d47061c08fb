// The exchange spec's names and look-ups (gossip/algorithms/exchange_spec.h).
#include "gossip/algorithms/exchange_spec.h"

#include <string>

namespace starling::gossip {

std::string peer_key_name(PeerId id) { return "peer" + std::to_string(id); }

bool parse_exchange_mode(const std::string& text, ExchangeMode& out) {
  for (std::size_t i = 0; i < std::size(kExchangeModeNames); ++i)
    if (text == kExchangeModeNames[i]) {
      out = static_cast<ExchangeMode>(i);
      return true;
    }
  return false;
}

const char* exchange_mode_name(ExchangeMode mode) { return kExchangeModeNames[static_cast<int>(mode)]; }

bool uses_topology(ExchangeMode mode) {
  return mode == ExchangeMode::gossip || mode == ExchangeMode::async_gossip || mode == ExchangeMode::gradient_tracking ||
         mode == ExchangeMode::push_sum || mode == ExchangeMode::exact_diffusion || mode == ExchangeMode::clique_averaging;
}

AttackSpec attack_of(const std::vector<PeerAddress>& peers, PeerId id) {
  for (const PeerAddress& p : peers)
    if (p.id == id) return p.attack;
  return {};
}

}  // namespace starling::gossip
