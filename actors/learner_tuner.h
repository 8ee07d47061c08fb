#pragma once
// node.learners = "auto": which learner count and SMA period to train with, decided from
// samples/s measured one configuration at a time. Three phases, Crossbow's and then ours:
//   count:   1, 2, 3, ... learners with the configured averaging, growing while each added
//            learner raises throughput by more than the threshold (the last one is dropped);
//   period:  with sma, the chosen count (at least 2) as independent replicas (averaged only
//            to be evaluated or mixed) first: rounds only cost, so where those do not beat
//            one learner no period will, and the phase ends; else with an SMA round every 4
//            and every 2 steps;
//   confirm: the fastest configuration of that count, if it beat one learner by more than
//            the threshold, is measured again right after one learner, and kept only if it
//            still does. Windows far apart in time see different loads on a shared host;
//            two adjacent ones see the same.
// Else one learner: never slower than one learner, as measured side by side.
// No clock and no actors here: the node measures a window and calls record(), so the
// decisions are tested with injected rates.
#include "actors/node_spec.h"
#include "learners/checkpoints/checkpoint.h"

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
  /// ignored); at most `max_learners` (the node passes no more than its cores: a learner is a
  /// compute-bound thread); `threshold`: the gain that justifies a learner, 0.1 = 10 %.
  LearnerTuner(const Averaging& configured, int max_learners, double threshold);

  /// Still measuring: the node should run trial() and report its rate.
  bool active() const { return phase_ != Phase::fixed && phase_ != Phase::settled; }
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
  enum class Phase : uint8_t { fixed, count, period, settled, confirm };  // numbered as in checkpoints
  struct Measured {
    Averaging averaging;
    double rate = 0.0;
  };

  void record_count(double rate);
  void begin_period_phase(int count);
  void next_period_trial();
  void choose();
  void record_confirmation(double rate);
  void settle(const Averaging& choice, double rate, double one_rate);
  const Measured* fastest_of_count() const;
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
