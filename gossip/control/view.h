#pragma once
// A membership view of a synchronous job: which peers train together, under which number.
// Views are numbered from 0 (every [[peer]] of the config) upward, one per agreed change
// (view_agreement.h). Data frames carry the view they belong to in the top bits of the
// header's round field, so that frames of an abandoned view can never be mixed into the
// next one: bits 63..40 the view number (modulo 2^24), bits 39..0 the round.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gossip/transport/message.h"

namespace starling::gossip {

inline constexpr int kViewShift = 40;
inline constexpr std::uint64_t kRoundMask = (std::uint64_t{1} << kViewShift) - 1;

struct View {
  std::uint64_t number = 0;
  std::vector<PeerId> members;  // ascending ids

  bool contains(PeerId peer) const { return std::binary_search(members.begin(), members.end(), peer); }
};

/// The header round of `round` in view `view`.
inline std::uint64_t tagged_round(std::uint64_t view, std::uint64_t round) {
  return (view << kViewShift) | (round & kRoundMask);
}
/// The view number as a round carries it (its low 24 bits).
inline std::uint64_t view_tag(std::uint64_t view) { return view & ((std::uint64_t{1} << (64 - kViewShift)) - 1); }
inline std::uint64_t view_of_round(std::uint64_t tagged) { return tagged >> kViewShift; }

/// "{0, 2, 3}", for logs.
inline std::string describe(const std::vector<PeerId>& peers) {
  std::string text = "{";
  for (std::size_t i = 0; i < peers.size(); ++i) text += (i ? ", " : "") + std::to_string(peers[i]);
  return text + "}";
}

}  // namespace starling::gossip
