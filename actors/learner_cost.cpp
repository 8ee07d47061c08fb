#include "actors/learner_cost.h"

#include "learners/models/aligned_buffer.h"
#include "learners/replicas/sma.h"
#include "learners/replicas/sma_group.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

namespace starling::actors {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kIterations = 8;  // per round and learner
constexpr int kMaxRounds = 7;
// A small rate: the replicas are thrown away, but a diverging one would time NaN paths.
constexpr float kRate = 1e-4f;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double seconds(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

// The scratch node: k replicas on the learners' shards, and a z for their rounds.
struct Scratch {
  std::vector<std::unique_ptr<Learner>> replicas;
  AlignedBuffer<float> z, z_prev;
  std::unique_ptr<sma::SmaGroup> group;  // null without rounds
};

Scratch make_scratch(const NodeSpec& spec, const std::shared_ptr<const Task>& task) {
  Scratch s;
  const int k = spec.learners;
  for (int j = 0; j < k; ++j) {
    LearnerSpec one = spec.train.learner;
    one.part = spec.part, one.shard = j, one.shards = k, one.learner = j;
    s.replicas.push_back(std::make_unique<Learner>(one, task));
  }
  const std::size_t n = s.replicas[0]->model().param_count();
  const float* init = s.replicas[0]->model().params();
  s.z.resize(n), s.z_prev.resize(n);
  std::copy(init, init + n, s.z.data());
  std::copy(init, init + n, s.z_prev.data());
  if (spec.intra_sync == IntraSync::sma)
    s.group = std::make_unique<sma::SmaGroup>(s.z.data(), s.z_prev.data(), k, n, sma::alpha_for(spec.alpha, k),
                                              static_cast<float>(spec.momentum));
  return s;
}

// kIterations of every replica on a thread of its own: steps started together, then the
// round. Appends the round's sums of the slowest steps and of the SMA rounds' wall times: a
// thread preempted by another process stalls every learner at the next barrier, a cost that
// k learners on a shared host really pay, so it is kept within a round (and a round that
// was unlucky as a whole is left out by the median).
void time_group(Scratch& s, LearnerTimings& out) {
  const int k = static_cast<int>(s.replicas.size());
  std::vector<std::vector<double>> steps(k, std::vector<double>(kIterations)), rounds = steps;
  sma::SpinBarrier start(k);
  std::vector<std::thread> threads;
  for (int j = 0; j < k; ++j)
    threads.emplace_back([&, j] {
      Learner& learner = *s.replicas[static_cast<std::size_t>(j)];
      for (int i = 0; i < kIterations; ++i) {
        start.arrive_and_wait();
        const auto t0 = Clock::now();
        learner.step(kRate);
        const auto t1 = Clock::now();
        if (s.group) s.group->round(j, learner.model().params());
        steps[j][i] = seconds(t0, t1), rounds[j][i] = seconds(t1, Clock::now());
      }
    });
  for (auto& t : threads) t.join();
  double step_sum = 0.0, round_sum = 0.0;
  for (int i = 0; i < kIterations; ++i) {
    double slowest = 0.0, round = 1e30;
    for (int j = 0; j < k; ++j) slowest = std::max(slowest, steps[j][i]), round = std::min(round, rounds[j][i]);
    // The last learner to finish its step waits for nobody: its round is the round's own time.
    step_sum += slowest, round_sum += s.group ? round : 0.0;
  }
  out.group_step.push_back(step_sum / kIterations), out.group_round.push_back(round_sum / kIterations);
}

void time_one(Learner& learner, LearnerTimings& out) {
  const auto t0 = Clock::now();
  for (int i = 0; i < kIterations; ++i) learner.step(kRate);
  out.one_step.push_back(seconds(t0, Clock::now()) / kIterations);
}

}  // namespace

LearnerCost judge_learners(int learners, IntraSync mode, int sync_every, const LearnerTimings& t) {
  const double one = median(t.one_step), step = median(t.group_step);
  const double round = mode == IntraSync::sma ? median(t.group_round) : 0.0;
  LearnerCost cost;
  cost.speedup = learners * one / std::max(step + round / std::max(1, sync_every), 1e-12);
  if (cost.speedup >= 1.0) return cost;
  char rounds[120] = "";
  if (mode == IntraSync::sma)
    std::snprintf(rounds, sizeof rounds, " and a %.2f ms SMA round every %d step(s)", round * 1e3, sync_every);
  char line[400];
  std::snprintf(line, sizeof line,
                "%d learners measured at %.2fx the samples/s of one learner here (one: %.2f ms a step; %d: %.2f ms a "
                "step%s); node.learners = \"auto\" tunes the count and the SMA period",
                learners, cost.speedup, one * 1e3, learners, step * 1e3, rounds);
  cost.note = line;
  return cost;
}

LearnerTimings time_learners(const NodeSpec& spec, const std::shared_ptr<const Task>& task, double budget_seconds) {
  Scratch scratch = make_scratch(spec, task);
  for (auto& replica : scratch.replicas) replica->step(kRate);  // first steps pay for allocation
  LearnerTimings timings;
  const auto start = Clock::now();
  for (int r = 0; r < kMaxRounds && (r < 1 || seconds(start, Clock::now()) < budget_seconds); ++r) {
    time_one(*scratch.replicas[0], timings);
    time_group(scratch, timings);
  }
  return timings;
}

bool worth_timing(const NodeSpec& spec) {
  return spec.learners >= 2 && spec.detached_learners && spec.intra_sync != IntraSync::average;
}

}  // namespace starling::actors
