#include "actors/learner_tuner.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>

namespace starling::actors {
namespace {

// The period phase's candidates, independent replicas first: they are what the count's
// learners give without any round, so the others can only be slower.
std::vector<Averaging> period_candidates(int learners) {
  return {{learners, IntraSync::none, 1},
          {learners, IntraSync::sma, 4},
          {learners, IntraSync::sma, 2},
          {learners, IntraSync::sma, 1}};
}

}  // namespace

bool operator==(const Averaging& a, const Averaging& b) {
  if (a.learners != b.learners || a.mode != b.mode) return false;
  return a.mode != IntraSync::sma || a.sync_every == b.sync_every;  // the period means nothing otherwise
}

std::string describe(const Averaging& a) {
  if (a.learners == 1) return "1 learner";
  const std::string count = std::to_string(a.learners) + " learners";
  switch (a.mode) {
    case IntraSync::average: return count + ", synchronous SGD";
    case IntraSync::none: return count + ", independent";
    case IntraSync::sma: break;
  }
  return count + (a.sync_every == 1 ? ", SMA every step" : ", SMA every " + std::to_string(a.sync_every) + " steps");
}

LearnerTuner::LearnerTuner(const Averaging& configured, int max_learners, double threshold)
    : phase_(Phase::count),
      configured_(configured),
      max_learners_(std::max(1, max_learners)),
      threshold_(threshold),
      trial_{1, configured.mode, configured.sync_every} {}

void LearnerTuner::record(double rate) {
  if (!active()) return;
  measured_.push_back({trial_, rate});
  if (phase_ == Phase::count) return record_count(rate);
  if (phase_ == Phase::confirm) return record_confirmation(rate);
  log_.push_back(fmt::format("{} give {:.0f} samples/s", describe(trial_), rate));
  const bool rounds_cannot_pay = trial_.mode == IntraSync::none && rate <= measured_.front().rate * (1.0 + threshold_);
  if (rounds_cannot_pay) return choose();
  next_period_trial();
}

// Crossbow's rule: keep adding while a learner adds more than the threshold.
void LearnerTuner::record_count(double rate) {
  const int k = trial_.learners;
  const double best = measured_.size() > 1 ? measured_[measured_.size() - 2].rate : 0.0;
  if (best == 0.0 || rate > best * (1.0 + threshold_)) {
    const bool more = k < max_learners_;
    log_.push_back(fmt::format("{} give {:.0f} samples/s{}", describe(trial_), rate, more ? "; adding one" : "; at the maximum"));
    if (!more) return begin_period_phase(k);
    ++trial_.learners;
    return;
  }
  log_.push_back(fmt::format("{} give {:.0f} samples/s, not {:.0f}% above {:.0f}; the count is {}", describe(trial_),
                             rate, threshold_ * 100, best, k - 1));
  begin_period_phase(k - 1);
}

// The period is tuned at two learners at least: where a second learner with exact rounds
// did not pay, it may with fewer rounds.
void LearnerTuner::begin_period_phase(int count) {
  count_ = count;
  if (configured_.mode != IntraSync::sma || max_learners_ < 2) return choose();
  count_ = std::max(count, 2);
  phase_ = Phase::period;
  next_period_trial();
}

void LearnerTuner::next_period_trial() {
  for (const Averaging& candidate : period_candidates(count_))
    if (!find(candidate)) {
      trial_ = candidate;
      return;
    }
  choose();
}

// The fastest configuration of the chosen count goes to the side-by-side check if it beat
// one learner; else one learner it is.
void LearnerTuner::choose() {
  const Measured& one = measured_.front();  // the count phase starts at one learner
  const Measured* best = fastest_of_count();
  if (count_ < 2 || !best || best->rate <= one.rate * (1.0 + threshold_)) return settle(one.averaging, one.rate, one.rate);
  phase_ = Phase::confirm;
  trial_ = one.averaging;
}

// One learner, then the candidate, in adjacent windows.
void LearnerTuner::record_confirmation(double rate) {
  if (trial_.learners == 1) {
    trial_ = fastest_of_count()->averaging;
    log_.push_back(fmt::format("1 learner again gives {:.0f} samples/s", rate));
    return;
  }
  const double one_rate = measured_[measured_.size() - 2].rate;
  log_.push_back(fmt::format("{} again give {:.0f} samples/s", describe(trial_), rate));
  if (rate > one_rate * (1.0 + threshold_)) return settle(trial_, rate, one_rate);
  settle(measured_.front().averaging, one_rate, one_rate);
}

void LearnerTuner::settle(const Averaging& choice, double rate, double one_rate) {
  phase_ = Phase::settled;
  trial_ = choice;
  log_.push_back(fmt::format("settling on {}: {:.0f} samples/s, {:.2f}x one learner", describe(choice), rate,
                             rate / std::max(one_rate, 1e-9)));
}

const LearnerTuner::Measured* LearnerTuner::fastest_of_count() const {
  const Measured* best = nullptr;
  for (const Measured& m : measured_)
    if (m.averaging.learners == count_ && (!best || m.rate > best->rate)) best = &m;
  return best;
}

const LearnerTuner::Measured* LearnerTuner::find(const Averaging& a) const {
  for (const Measured& m : measured_)
    if (m.averaging == a) return &m;
  return nullptr;
}

namespace {

void put_averaging(SectionWriter& out, const Averaging& a) {
  out.put<int32_t>(a.learners).put<uint8_t>(static_cast<uint8_t>(a.mode)).put<int32_t>(a.sync_every);
}

Averaging get_averaging(SectionReader& in) {
  Averaging a;
  a.learners = in.get<int32_t>();
  const uint8_t mode = in.get<uint8_t>();
  a.sync_every = in.get<int32_t>();
  if (a.learners < 1 || a.learners > 4096 || mode > static_cast<uint8_t>(IntraSync::none) || a.sync_every < 1)
    throw CheckpointError("section '" + in.name() + "': a tuned averaging out of range");
  a.mode = static_cast<IntraSync>(mode);
  return a;
}

}  // namespace

void LearnerTuner::save(SectionWriter& out) const {
  out.put<uint8_t>(static_cast<uint8_t>(phase_)).put<int32_t>(count_);
  put_averaging(out, trial_);
  out.put<uint64_t>(measured_.size());
  for (const Measured& m : measured_) {
    put_averaging(out, m.averaging);
    out.put(m.rate);
  }
  out.put<uint64_t>(log_.size());
  for (const auto& line : log_) out.text(line);
}

void LearnerTuner::restore(SectionReader& in) {
  const uint8_t phase = in.get<uint8_t>();
  if (phase > static_cast<uint8_t>(Phase::confirm)) throw CheckpointError("section '" + in.name() + "': tuner phase " + std::to_string(phase));
  phase_ = static_cast<Phase>(phase);
  count_ = in.get<int32_t>();
  trial_ = get_averaging(in);
  const uint64_t measured = in.get<uint64_t>();
  if (measured > 4096) throw CheckpointError("section '" + in.name() + "': " + std::to_string(measured) + " tuner trials");
  measured_.resize(measured);
  for (Measured& m : measured_) m.averaging = get_averaging(in), m.rate = in.get<double>();
  const uint64_t lines = in.get<uint64_t>();
  if (lines > 4096) throw CheckpointError("section '" + in.name() + "': " + std::to_string(lines) + " tuner log lines");
  log_.resize(lines);
  for (auto& line : log_) line = in.text();
}

}  // namespace starling::actors
