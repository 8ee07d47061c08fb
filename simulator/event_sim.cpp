#include "simulator/event_sim.h"

#include <algorithm>
#include <queue>
#include <random>

namespace starling::simulator {
namespace {

// Rounds to simulate: a few suffice without stragglers (every round is the same); with
// them, as many as keep the draws near two million.
int rounds_for(const RoundModel& m) {
  if (!m.stragglers.active()) return 4;
  const double draws = static_cast<double>(m.peers) * std::max(1, m.steps_per_round);
  return static_cast<int>(std::clamp(2e6 / draws, 30.0, 400.0));
}

// One peer's compute in one round: its steps, each with its own factor, and the overhead.
double compute(const RoundModel& m, std::mt19937_64& rng) {
  double c = m.round_overhead_seconds;
  for (int h = 0; h < m.steps_per_round; ++h) c += m.step_seconds * m.stragglers.draw(rng);
  return c;
}

}  // namespace

double barrier_round_seconds(const RoundModel& m) {
  std::mt19937_64 rng(m.seed);
  const int rounds = rounds_for(m);
  double total = 0;
  for (int r = 0; r < rounds; ++r) {
    double slowest = 0;
    for (int i = 0; i < m.peers; ++i) slowest = std::max(slowest, compute(m, rng));
    total += slowest + m.exchange_seconds;
  }
  return total / rounds;
}

double neighbour_round_seconds(const RoundModel& m, const InNeighbours& in) {
  std::mt19937_64 rng(m.seed);
  const int rounds = rounds_for(m), warm = rounds / 4;
  std::vector<double> finish(static_cast<std::size_t>(m.peers), 0.0), ready(finish.size());
  double at_warm = 0;
  for (int r = 0; r < rounds; ++r) {
    if (r == warm) at_warm = *std::max_element(finish.begin(), finish.end());
    for (int i = 0; i < m.peers; ++i) ready[i] = finish[i] + compute(m, rng);
    for (int i = 0; i < m.peers; ++i) {
      double start = ready[i];
      for (int j : in(i, static_cast<std::uint64_t>(r))) start = std::max(start, ready[j]);
      finish[i] = start + m.exchange_seconds;
    }
  }
  return (*std::max_element(finish.begin(), finish.end()) - at_warm) / (rounds - warm);
}

double staleness_step_seconds(const RoundModel& m, const std::vector<std::vector<int>>& neighbours,
                              std::uint64_t max_staleness) {
  std::mt19937_64 rng(m.seed);
  const std::size_t p = static_cast<std::size_t>(m.peers);
  const std::int64_t target = m.stragglers.active() ? std::clamp<std::int64_t>(2000000 / m.peers, 50, 400) : 8;
  std::vector<std::int64_t> done(p, 0);
  std::vector<bool> running(p, false);
  using Event = std::pair<double, std::size_t>;  // finish time, peer
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  auto step = [&](std::size_t) { return m.step_seconds * m.stragglers.draw(rng) + m.exchange_seconds + m.round_overhead_seconds; };
  auto may_start = [&](std::size_t i) {
    if (running[i] || done[i] >= target) return false;
    for (int j : neighbours[i])
      if (done[i] - done[static_cast<std::size_t>(j)] > static_cast<std::int64_t>(max_staleness) && done[j] < target) return false;
    return true;
  };
  for (std::size_t i = 0; i < p; ++i) events.push({step(i), i}), running[i] = true;
  double now = 0;
  while (!events.empty()) {
    const auto [t, i] = events.top();
    events.pop();
    now = t, running[i] = false, ++done[i];
    if (may_start(i)) events.push({now + step(i), i}), running[i] = true;
    for (int j : neighbours[i])
      if (may_start(static_cast<std::size_t>(j))) events.push({now + step(static_cast<std::size_t>(j)), static_cast<std::size_t>(j)}), running[j] = true;
  }
  return now / static_cast<double>(target);
}

}  // namespace starling::simulator
