#pragma once
// What an attacking peer (a `[[peer]]` with `attack`, issue 33) sends in place of its model.
// Every attack is computed from what the peer received from its honest in-neighbours, the
// attacker of ClippedGossip (He, Karimireddy, Jaggi 2022) made a real peer: it knows what its
// neighbours send it, this round and the last, not the whole network. m is the mean of this
// round's vectors, s the attack's scale, and for a target t, v_t is the pull of t's
// neighbourhood: m − x_t when the attacker sees other honest peers, else t's own change
// since the last round (which near consensus is mostly that pull):
//   dissensus   to target t: x_t − s·v_t, pushing t away from its neighbourhood
//   alie        m − s·σ, σ the coordinate-wise spread of what it sees (the standard
//               deviation of two or more vectors; of one, its change since the last round)
//               (Baruch et al. 2019)
//   ipm         −s·m, inner-product manipulation (Xie et al. 2020)
//   sign-flip   x_prev − s·(x − x_prev): its own training change since the last round, reversed
//   random      s·N(0, 1) in every coordinate
//   label-flip  trains on labels c → C−1−c and sends its model honestly
// Attackers collude: they know each other from the config and never wait for each other.
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "protocols/span.h"

namespace starling::gossip {

enum class Attack { none, dissensus, alie, ipm, sign_flip, label_flip, random };
/// The config's name of each attack, indexed by Attack.
inline constexpr const char* kAttackNames[] = {"none", "dissensus", "alie", "ipm", "sign-flip", "label-flip", "random"};
static_assert(std::size(kAttackNames) == static_cast<std::size_t>(Attack::random) + 1, "one name each");

bool parse_attack(const std::string& text, Attack& out);
const char* attack_name(Attack attack);

struct AttackSpec {
  Attack kind = Attack::none;
  double scale = 1.0;
  bool on() const { return kind != Attack::none; }
  /// Whether it sends crafted vectors (label-flip speaks the protocol honestly).
  bool crafts() const { return kind != Attack::none && kind != Attack::label_flip; }
};

/// The crafted vectors of one round.
class AttackCrafter {
 public:
  AttackCrafter(AttackSpec spec, std::uint64_t seed) : spec_(spec), rng_(seed) {}

  /// What to send to `target` (a key of `received`, or any other out-neighbour) given the
  /// honest in-neighbours' vectors; `own` and `previous` are the attacker's model now and
  /// after its last round (sign-flip).
  std::vector<float> craft(int target, const std::map<int, std::vector<float>>& received,
                           protocols::Span<const float> own, protocols::Span<const float> previous);
  /// Ends the round: what was received becomes the last round's.
  void remember(std::map<int, std::vector<float>> received) { last_ = std::move(received); }

 private:
  std::vector<float> pull(int target, const std::map<int, std::vector<float>>& received,
                          const std::vector<float>& mean) const;
  std::vector<float> spread(const std::map<int, std::vector<float>>& received, const std::vector<float>& mean) const;

  AttackSpec spec_;
  std::mt19937_64 rng_;
  std::map<int, std::vector<float>> last_;  // the last round's vectors, by rank
};

}  // namespace starling::gossip
