// The monitoring overlay of the control plane (gossip/control/watch_overlay.h).
#include "gossip/control/watch_overlay.h"

#include <algorithm>
#include <set>

namespace starling::gossip {

std::vector<PeerId> watch_overlay(const std::vector<PeerId>& ring, PeerId self) {
  const auto at = std::find(ring.begin(), ring.end(), self);
  std::set<PeerId> out;
  if (at == ring.end()) {
    out.insert(ring.begin(), ring.end());
  } else {
    const std::size_t n = ring.size(), i = static_cast<std::size_t>(at - ring.begin());
    for (std::size_t step = 1; step < n; step *= 2) {
      out.insert(ring[(i + step) % n]);
      out.insert(ring[(i + n - step) % n]);
    }
  }
  out.erase(self);
  return {out.begin(), out.end()};
}

}  // namespace starling::gossip
