// The outer_plan payload (protocols/outer_plan_messages.h).
#include "protocols/outer_plan_messages.h"

#include <cmath>
#include <cstring>

#include "protocols/byte_io.h"

namespace starling::protocols {

void encode_outer_plan(const OuterPlan& plan, std::vector<std::uint8_t>& payload) {
  payload.clear();
  ByteWriter w(payload);
  w.write<std::uint64_t>(plan.base);
  w.write<std::uint64_t>(plan.next);
  w.write<std::uint64_t>(plan.iteration);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &plan.compute_seconds, sizeof bits);
  w.write<std::uint64_t>(bits);
}

Result<OuterPlan> decode_outer_plan(ByteSpan payload) {
  if (payload.size() < kOuterPlanPayloadSize) return Error::truncated;
  if (payload.size() > kOuterPlanPayloadSize) return Error::oversized;
  ByteReader r(payload);
  OuterPlan plan;
  plan.base = r.read<std::uint64_t>();
  plan.next = r.read<std::uint64_t>();
  plan.iteration = r.read<std::uint64_t>();
  const std::uint64_t bits = r.read<std::uint64_t>();
  std::memcpy(&plan.compute_seconds, &bits, sizeof bits);
  if (!std::isfinite(plan.compute_seconds) || plan.compute_seconds < 0.0) return Error::invalid_option;
  return plan;
}

}  // namespace starling::protocols
