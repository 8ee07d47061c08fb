#pragma once
// One state: in the modes where every member ends a round with the same model (all-reduce
// and its compressed and outer-optimizer variants, algorithm_table.h), each member sends the
// view's other members the digest of its shared state after every round (the model, and
// what its algorithm keeps that must agree too, such as DiLoCo's x₀ and outer momentum;
// protocols/state_digest.h, state_hash_messages.h). The control plane records what arrives
// here; before its next round each member judges the last one:
//  - the majority digest is the one more than half of the members that reported hold;
//  - a tie, or no digest above half, has no majority: the disagreement is counted and
//    logged, and nobody's state is replaced (nobody can tell which is right);
//  - a member whose own digest differs from the majority's takes the majority's state from
//    its holders (ElasticSync heals).
// A member also vouches to the peers a view change admits for the model they take over
// (its digest, keyed by the new view and the round before its first), so that a joiner
// checks each chunk it takes against it and passes over a seeder that serves a wrong one
// (model_transfer.h).
// Digests are kept for the last kKeptRounds (view, round) pairs only.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gossip/transport/message.h"

namespace starling::gossip {

inline constexpr std::size_t kKeptRounds = 8;
/// How many of the last rounds' own digests a peer reports (StateCheck::recent).
inline constexpr std::size_t kRecentDigests = 16;

/// The judgement of one round's digests.
struct StateVerdict {
  std::optional<std::uint64_t> majority;  // the digest more than half of the reporters hold
  std::vector<PeerId> differing;          // reporters without it (every reporter when there is no majority)
  std::vector<PeerId> missing;            // members that sent none
  bool agreed() const { return majority && differing.empty(); }
};

/// Judges the digests `reported` for one round among `members` (ascending).
StateVerdict judge(const std::map<PeerId, std::uint64_t>& reported, const std::vector<PeerId>& members);

/// What a peer's checks found over its run, for its summary.
struct StateCheck {
  std::uint64_t rounds_checked = 0;
  std::uint64_t disagreements = 0;  // rounds whose members' digests were not all the same
  std::uint64_t heals = 0;          // times this peer took the majority's state
  std::deque<std::pair<std::uint64_t, std::uint64_t>> recent;  // (round, own digest), the last kRecentDigests
};

/// The digests heard per view and round (this peer's own included, recorded by its owner).
class StateHashes {
 public:
  void record(PeerId from, std::uint64_t view, std::uint64_t round, std::uint64_t digest);
  /// The digests recorded for `round` of `view` (empty when none, or it was forgotten).
  std::map<PeerId, std::uint64_t> of(std::uint64_t view, std::uint64_t round) const;
  /// Whether every one of `members` has reported `round` of `view`.
  bool complete(std::uint64_t view, std::uint64_t round, const std::vector<PeerId>& members) const;

 private:
  using Key = std::pair<std::uint64_t, std::uint64_t>;  // view, round
  std::map<Key, std::map<PeerId, std::uint64_t>> by_round_;
};

/// A digest as logs and summaries write it: 16 hex digits.
std::string digest_text(std::uint64_t digest);

}  // namespace starling::gossip
