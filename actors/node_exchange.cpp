#include "actors/node_exchange.h"

#include "actors/node_state.h"
#include "learners/replicas/sma.h"

#include <algorithm>

namespace starling::actors {

std::optional<gossip::Position> mix_overlapped(NodeState& s, bool measure, Then then, std::uint64_t iteration) {
  NodePeers& p = s.peers;
  float* z = s.central->params();
  const std::size_t n = s.central->param_count();
  auto distance = [&] { return sma::relative_distance(p.overlap->snapshot().data(), p.overlap->mixed().data(), n); };
  const bool arriving = p.overlap->pending();
  if (const auto moved = p.overlap->complete(z)) return moved;
  p.exchanges += arriving;
  // Measured before the next mix begins: begin() overwrites both buffers, and its thread
  // writes the mixed one from then on.
  if (measure && arriving) p.consensus_distance = distance();
  if (then == Then::overlap) {
    p.overlap->begin(z, iteration, p.compute_since_exchange);
    return std::nullopt;
  }
  if (then == Then::rest) return std::nullopt;
  const auto moved = p.overlap->exchange_now(z, iteration, p.compute_since_exchange);
  ++p.exchanges;
  if (measure) p.consensus_distance = distance();
  return moved;
}

std::optional<gossip::Position> mix_strictly(NodeState& s, bool measure, std::uint64_t iteration) {
  NodePeers& p = s.peers;
  const std::size_t n = s.central->param_count();
  float* z = s.central->params();
  if (measure) std::copy(z, z + n, p.z_before.data());
  const auto moved = p.exchange->exchange(iteration, p.compute_since_exchange);
  ++p.exchanges;
  if (measure) p.consensus_distance = sma::relative_distance(p.z_before.data(), z, n);
  return moved;
}

}  // namespace starling::actors
