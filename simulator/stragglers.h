#pragma once
// Stragglers: the distribution of a peer's per-step time, as a factor on the measured step
// time drawn independently for every step of every peer.
//   "none"                  every step takes the measured time
//   "lognormal:SIGMA"       factor exp(σZ − σ²/2), Z standard normal: mean 1, a heavy right
//                           tail (σ = 0.1: ±10 % jitter; σ = 0.5: occasional 3× steps)
//   "bimodal:P:FACTOR"      with probability P the step takes FACTOR times as long (a
//                           preempted or throttled worker); mean 1 + P·(FACTOR − 1)
#include <random>
#include <string>

namespace starling::simulator {

struct Stragglers {
  enum class Kind { none, lognormal, bimodal } kind = Kind::none;
  double sigma = 0.0;
  double probability = 0.0, factor = 1.0;

  bool active() const { return kind != Kind::none; }
  /// One step's factor.
  double draw(std::mt19937_64& rng) const;
  double mean() const;
};

/// Parses a distribution as above; SpecError (simulator/network.h) on anything else.
Stragglers parse_stragglers(const std::string& text);

}  // namespace starling::simulator
