// Checkpoint section "exchange" (actors/exchange_section.h).
#include "actors/exchange_section.h"

#include <string>

namespace starling::actors {

void put_exchange_state(Checkpoint& c, const gossip::AlgorithmState& state) {
  if (state.values.empty()) return;
  SectionWriter out;
  out.put<uint64_t>(state.members.size());
  for (gossip::PeerId p : state.members) out.put(p);
  out.put(state.round).put<uint64_t>(state.values.size()).floats(state.values.data(), state.values.size());
  c.add("exchange", out.take());
}

// At most a few model lengths (gradient tracking keeps three).
gossip::AlgorithmState get_exchange_state(SectionReader in, std::size_t parameters) {
  gossip::AlgorithmState state;
  const uint64_t members = in.get<uint64_t>();
  if (members > (uint64_t{1} << 31)) throw CheckpointError("section 'exchange': " + std::to_string(members) + " members");
  for (uint64_t i = 0; i < members; ++i) state.members.push_back(in.get<gossip::PeerId>());
  state.round = in.get<uint64_t>();
  const uint64_t count = in.get<uint64_t>();
  if (count > 16 * static_cast<uint64_t>(parameters))
    throw CheckpointError("section 'exchange': " + std::to_string(count) + " values");
  state.values.resize(count);
  in.floats(state.values.data(), count);
  in.finish();
  return state;
}

}  // namespace starling::actors
