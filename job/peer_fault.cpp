// Faults a peer process can be started with (job/peer_fault.h).
#include "job/peer_fault.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

namespace starling::job {

namespace {

// The lowest mantissa bit of the chunk's middle float: the value stays finite and within one
// unit in the last place, so only a digest can tell.
void flip_one_bit(std::vector<float>& chunk) {
  if (chunk.empty()) return;
  float& x = chunk[chunk.size() / 2];
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits ^= 1u;
  std::memcpy(&x, &bits, sizeof bits);
}

}  // namespace

void inject_fault(Config& config, const std::string& name) {
  if (name.empty()) return;
  if (name != "lying-seeder") throw ConfigError("--fault: no fault '" + name + "'; the one there is: lying-seeder");
  config.node.exchange.fault_in_served = flip_one_bit;
  spdlog::warn("this peer LIES (--fault lying-seeder): it flips one bit in every chunk of state it serves");
}

}  // namespace starling::job
