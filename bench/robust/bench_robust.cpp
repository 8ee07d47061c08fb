// Robust aggregation benchmark: the time of one round's mixing of a model with its
// neighbours' (robust_mix, gossip/algorithms/robust_aggregation.h) against the plain mean's
// x += W_ij (x_j − x_i) loop, for the Fashion-MNIST MLP's 235,402 parameters and the
// neighbour counts of the shipped topologies (ring 2, attacked ring 4, dumbbell clique 7,
// 8 with an attacker across). Median of repeats, single thread, on each ISA path this CPU has.
// Usage: bench_robust [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gossip/algorithms/robust_aggregation.h"
#include "platform/cpu_features.h"

namespace g = starling::gossip;
namespace sp = starling::platform;

namespace {

constexpr std::size_t kParams = 235402;  // MLP 784-256-128-10

template <class F>
double median_ms(int repeats, F&& f) {
  std::vector<double> t;
  for (int k = 0; k < repeats; ++k) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const int repeats = quick ? 3 : 15;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> own(kParams);
  for (float& v : own) v = normal(rng);
  std::vector<sp::Isa> isas{sp::Isa::scalar};
  if (sp::detected_isa() >= sp::Isa::avx2) isas.push_back(sp::Isa::avx2);
  if (sp::detected_isa() >= sp::Isa::avx512) isas.push_back(sp::Isa::avx512);
  std::printf("%-7s %-10s %-13s %10s %12s\n", "isa", "neighbours", "aggregator", "ms/round", "ns/param");
  for (sp::Isa isa : isas) {
    sp::force_isa(isa);
    for (int count : {2, 4, 7, 8}) {
      std::vector<std::vector<float>> others(static_cast<std::size_t>(count), own);
      for (auto& o : others)
        for (float& v : o) v += 0.1f * normal(rng);
      std::vector<g::NeighbourVector> views;
      for (auto& o : others) views.push_back({o.data(), 1.0 / (count + 1)});
      std::vector<float> x = own;
      const double mean = median_ms(repeats, [&] {  // GossipAverage's own loop for the mean
        std::memcpy(x.data(), own.data(), kParams * sizeof(float));
        for (const auto& v : views)
          for (std::size_t i = 0; i < kParams; ++i) x[i] += static_cast<float>(v.weight) * (v.values[i] - own[i]);
      });
      std::printf("%-7s %-10d %-13s %10.3f %12.3f\n", std::string(sp::isa_name(isa)).c_str(), count, "mean", mean, mean * 1e6 / kParams);
      const g::AggregatorSpec specs[] = {{g::Aggregator::clipped, 0.0, 1},
                                         {g::Aggregator::trimmed_mean, 0.0, std::max(1, count / 4)},
                                         {g::Aggregator::median, 0.0, 1}};
      for (const auto& spec : specs) {
        const double ms = median_ms(repeats, [&] {
          std::memcpy(x.data(), own.data(), kParams * sizeof(float));
          g::robust_mix(spec, x, views);
        });
        std::printf("%-7s %-10d %-13s %10.3f %12.3f\n", std::string(sp::isa_name(isa)).c_str(), count, g::aggregator_name(spec.kind), ms,
                    ms * 1e6 / kParams);
      }
    }
  }
  return 0;
}
