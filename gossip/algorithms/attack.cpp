// The attacks' crafted vectors (gossip/algorithms/attack.h).
#include "gossip/algorithms/attack.h"

#include <cmath>

namespace starling::gossip {

bool parse_attack(const std::string& text, Attack& out) {
  for (std::size_t i = 0; i < std::size(kAttackNames); ++i)
    if (text == kAttackNames[i]) {
      out = static_cast<Attack>(i);
      return true;
    }
  return false;
}

const char* attack_name(Attack attack) { return kAttackNames[static_cast<int>(attack)]; }

namespace {

// The coordinate-wise mean of the received vectors; `own` when there are none.
std::vector<float> mean_of(const std::map<int, std::vector<float>>& received, protocols::Span<const float> own) {
  if (received.empty()) return std::vector<float>(own.begin(), own.end());
  std::vector<double> sum(own.size(), 0.0);
  for (const auto& [rank, v] : received)
    for (std::size_t i = 0; i < v.size(); ++i) sum[i] += v[i];
  std::vector<float> m(own.size());
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(sum[i] / received.size());
  return m;
}

}  // namespace

std::vector<float> AttackCrafter::pull(int target, const std::map<int, std::vector<float>>& received,
                                       const std::vector<float>& mean) const {
  const auto t = received.find(target);
  std::vector<float> v(mean.size(), 0.0f);
  if (t == received.end()) return v;
  const auto before = last_.find(target);
  if (received.size() > 1) {
    // m − x_t over the others only: (Σ − x_t)/(k − 1) − x_t.
    const float k = static_cast<float>(received.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = (mean[i] * k - t->second[i]) / (k - 1.0f) - t->second[i];
  } else if (before != last_.end()) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = t->second[i] - before->second[i];
  }
  return v;
}

std::vector<float> AttackCrafter::spread(const std::map<int, std::vector<float>>& received,
                                         const std::vector<float>& mean) const {
  std::vector<float> sigma(mean.size(), 0.0f);
  if (received.size() > 1) {
    for (std::size_t i = 0; i < sigma.size(); ++i) {
      double var = 0.0;
      for (const auto& [rank, v] : received) var += (v[i] - mean[i]) * (v[i] - mean[i]);
      sigma[i] = static_cast<float>(std::sqrt(var / static_cast<double>(received.size() - 1)));
    }
  } else if (received.size() == 1 && last_.count(received.begin()->first)) {
    const auto& now = received.begin()->second;
    const auto& before = last_.at(received.begin()->first);
    for (std::size_t i = 0; i < sigma.size(); ++i) sigma[i] = std::abs(now[i] - before[i]);
  }
  return sigma;
}

std::vector<float> AttackCrafter::craft(int target, const std::map<int, std::vector<float>>& received,
                                        protocols::Span<const float> own, protocols::Span<const float> previous) {
  const float s = static_cast<float>(spec_.scale);
  std::vector<float> out = mean_of(received, own);
  switch (spec_.kind) {
    case Attack::dissensus: {
      const std::vector<float> v = pull(target, received, out);
      const auto t = received.find(target);
      const std::vector<float> xt = t != received.end() ? t->second : out;
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = xt[i] - s * v[i];
      break;
    }
    case Attack::alie: {
      const std::vector<float> sigma = spread(received, out);
      for (std::size_t i = 0; i < out.size(); ++i) out[i] -= s * sigma[i];
      break;
    }
    case Attack::ipm:
      for (float& v : out) v *= -s;
      break;
    case Attack::sign_flip:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = previous[i] - s * (own[i] - previous[i]);
      break;
    case Attack::random: {
      std::normal_distribution<float> noise(0.0f, s);
      for (float& v : out) v = noise(rng_);
      break;
    }
    case Attack::none:
    case Attack::label_flip: out.assign(own.begin(), own.end()); break;
  }
  return out;
}

}  // namespace starling::gossip
