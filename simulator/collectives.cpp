#include "simulator/collectives.h"

#include <algorithm>
#include <cmath>

namespace starling::simulator {

double framed_bytes(double payload) {
  return payload + kFrameHeaderBytes * std::max(1.0, std::ceil(payload / kSegmentBytes));
}

Cost ring_allreduce(int peers, double bytes, double elements, const Wire& wire, double add_seconds_per_element) {
  if (peers < 2) return {};
  const double p = peers, chunk = framed_bytes(bytes / p);
  const double steps = 2 * (p - 1);
  return {steps * (wire.alpha + chunk * wire.seconds_per_byte) + (p - 1) / p * elements * add_seconds_per_element,
          steps * chunk};
}

Cost ring_allgather(int peers, double payload_bytes, const Wire& wire) {
  if (peers < 2) return {};
  const double steps = peers - 1, w = framed_bytes(payload_bytes);
  return {steps * (wire.alpha + w * wire.seconds_per_byte), steps * w};
}

Cost neighbour_push(int degree, double bytes, const Wire& wire) {
  if (degree < 1) return {};
  const double sent = degree * framed_bytes(bytes);
  return {wire.alpha + sent * wire.seconds_per_byte, sent};
}

Cost pairwise_exchange(double bytes, const Wire& wire) {
  const double one = framed_bytes(bytes);
  return {2 * (wire.alpha + one * wire.seconds_per_byte), 2 * one};
}

}  // namespace starling::simulator
