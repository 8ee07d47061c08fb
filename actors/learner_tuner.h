#pragma once
// node.learners = "auto": which learner count and SMA period to train with, decided from
// samples/s measured one configuration at a time. Two phases, Crossbow's and then ours:
//   count:  1, 2, 3, ... learners with the configured averaging, growing while each added
//           learner raises throughput by more than the threshold (the last one is dropped);
//   period: with sma, the chosen count (at least 2) also with an SMA round every 2 and every
//           4 steps and as independent replicas (averaged only to be evaluated or mixed).
// It settles on the fastest configuration of that count if that beats one learner by more
// than the threshold, else on one learner: never slower than one learner, as measured.
// No clock and no actors here: the node measures a window and calls record(), so the
// decisions are tested with injected rates.
#include "actors/node.h"
#include "learners/checkpoint.h"

#include <string>
#include <vector>

namespace starling::actors {

/// How a node's learners are kept together: how many, and how often SMA averages them.
struct Averaging {
  int learners = 1;
  IntraSync mode = IntraSync::sma;
  int sync_every = 1;  // sma: iterations between rounds
};
bool operator==(const Averaging& a, const Averaging& b);

/// "2 learners, SMA every 4 steps", "1 learner", "2 learners, independent", for the log.
std::string describe(const Averaging& a);

class LearnerTuner {
 public:
  /// Inactive: a fixed learner count.
  LearnerTuner() = default;
  /// Starts the count phase at one learner with `configured`'s mode and period (its count is
  /// ignored); at most `max_learners`; `threshold`: the gain that justifies a learner, 0.1 = 10 %.
  LearnerTuner(const Averaging& configured, int max_learners, double threshold);

  /// Still measuring: the node should run trial() and report its rate.
  bool active() const { return phase_ == Phase::count || phase_ == Phase::period; }
  /// The configuration to measure next; once settled, the choice.
  const Averaging& trial() const { return trial_; }
  /// The samples/s that trial() gave over a window: moves to the next trial or settles, and
  /// logs what it measured and decided. Ignored once settled.
  void record(double samples_per_second);
  /// One line per measurement and one for the choice.
  const std::vector<std::string>& log() const { return log_; }

  /// For checkpoints: everything but the construction arguments, which come from the spec.
  void save(SectionWriter& out) const;
  /// Reads what save() wrote into a tuner made with the same arguments.
  void restore(SectionReader& in);

 private:
  enum class Phase : uint8_t { fixed, count, period, settled };
  struct Measured {
    Averaging averaging;
    double rate = 0.0;
  };

  void record_count(double rate);
  void begin_period_phase(int count);
  void next_period_trial();
  void settle();
  const Measured* find(const Averaging& a) const;

  Phase phase_ = Phase::fixed;
  Averaging configured_;
  int max_learners_ = 1;
  double threshold_ = 0.0;
  Averaging trial_;
  int count_ = 1;  // the period phase's learner count
  std::vector<Measured> measured_;
  std::vector<std::string> log_;
};

}  // namespace starling::actors
