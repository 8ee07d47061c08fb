// Recording and judging the members' state digests (gossip/control/state_hashes.h).
#include "gossip/control/state_hashes.h"

#include <cstdio>

namespace starling::gossip {

StateVerdict judge(const std::map<PeerId, std::uint64_t>& reported, const std::vector<PeerId>& members) {
  StateVerdict v;
  std::map<std::uint64_t, std::size_t> votes;
  std::size_t reporters = 0;
  for (PeerId p : members) {
    const auto it = reported.find(p);
    if (it == reported.end()) {
      v.missing.push_back(p);
      continue;
    }
    ++votes[it->second];
    ++reporters;
  }
  for (const auto& [digest, count] : votes)
    if (2 * count > reporters) v.majority = digest;
  for (PeerId p : members) {
    const auto it = reported.find(p);
    if (it != reported.end() && (!v.majority || it->second != *v.majority)) v.differing.push_back(p);
  }
  return v;
}

void StateHashes::record(PeerId from, std::uint64_t view, std::uint64_t round, std::uint64_t digest) {
  const Key key{view, round};
  if (by_round_.size() >= kKeptRounds && !by_round_.count(key)) {
    if (key < by_round_.begin()->first) return;  // older than everything kept
    by_round_.erase(by_round_.begin());
  }
  by_round_[key][from] = digest;
}

std::map<PeerId, std::uint64_t> StateHashes::of(std::uint64_t view, std::uint64_t round) const {
  const auto it = by_round_.find({view, round});
  return it == by_round_.end() ? std::map<PeerId, std::uint64_t>{} : it->second;
}

bool StateHashes::complete(std::uint64_t view, std::uint64_t round, const std::vector<PeerId>& members) const {
  const auto it = by_round_.find({view, round});
  if (it == by_round_.end()) return members.empty();
  for (PeerId p : members)
    if (!it->second.count(p)) return false;
  return true;
}

std::string digest_text(std::uint64_t digest) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(digest));
  return text;
}

}  // namespace starling::gossip
