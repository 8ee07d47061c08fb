#include "actors/node_exchange.h"

#include "learners/sma.h"

#include <algorithm>

namespace starling::actors {

std::optional<gossip::Position> mix_overlapped(NodeState& s, bool measure, Then then, std::uint64_t iteration) {
  float* z = s.central->params();
  const std::size_t n = s.central->param_count();
  auto distance = [&] { return sma::relative_distance(s.overlap->snapshot().data(), s.overlap->mixed().data(), n); };
  const bool arriving = s.overlap->pending();
  if (const auto moved = s.overlap->complete(z)) return moved;
  s.exchanges += arriving;
  // Measured before the next mix begins: begin() overwrites both buffers, and its thread
  // writes the mixed one from then on.
  if (measure && arriving) s.consensus_distance = distance();
  if (then == Then::overlap) {
    s.overlap->begin(z, iteration, s.compute_since_exchange);
    return std::nullopt;
  }
  if (then == Then::rest) return std::nullopt;
  const auto moved = s.overlap->exchange_now(z, iteration, s.compute_since_exchange);
  ++s.exchanges;
  if (measure) s.consensus_distance = distance();
  return moved;
}

std::optional<gossip::Position> mix_strictly(NodeState& s, bool measure, std::uint64_t iteration) {
  const std::size_t n = s.central->param_count();
  float* z = s.central->params();
  if (measure) std::copy(z, z + n, s.z_before.data());
  const auto moved = s.exchange->exchange(iteration, s.compute_since_exchange);
  ++s.exchanges;
  if (measure) s.consensus_distance = sma::relative_distance(s.z_before.data(), z, n);
  return moved;
}

}  // namespace starling::actors
