// node.learners = "auto": the tuner's trials and choice from injected samples/s (no clock):
// Crossbow's count phase, then the period phase at that count (at least two learners, cut
// short where independent replicas do not pay), the fastest configuration of that count
// checked again beside one learner, and a checkpoint round trip that goes on exactly where
// it left off.
#define BOOST_TEST_MODULE actors_learner_tuner
#include <boost/test/unit_test.hpp>

#include "actors/learner_tuner.h"

#include <map>

using namespace starling;
using namespace starling::actors;

namespace {

const Averaging kExact{1, IntraSync::sma, 1};

// Feeds the tuner the rates `rates` gives each trial (by description: the first for its first
// window, the next for the next, the last from then on) until it settles; returns the trials
// in order.
std::vector<std::string> drive(LearnerTuner& tuner, const std::map<std::string, std::vector<double>>& rates) {
  std::vector<std::string> trials;
  std::map<std::string, std::size_t> windows;
  while (tuner.active()) {
    trials.push_back(describe(tuner.trial()));
    BOOST_REQUIRE(trials.size() < 20u);
    const std::vector<double>& r = rates.at(trials.back());
    tuner.record(r[std::min(windows[trials.back()]++, r.size() - 1)]);
  }
  return trials;
}

}  // namespace

BOOST_AUTO_TEST_CASE(averagings_are_described_for_the_log) {
  BOOST_TEST(describe({1, IntraSync::sma, 4}) == "1 learner");
  BOOST_TEST(describe({2, IntraSync::sma, 1}) == "2 learners, SMA every step");
  BOOST_TEST(describe({3, IntraSync::sma, 4}) == "3 learners, SMA every 4 steps");
  BOOST_TEST(describe({2, IntraSync::none, 1}) == "2 learners, independent");
  BOOST_TEST(describe({2, IntraSync::average, 1}) == "2 learners, synchronous SGD");
  BOOST_TEST((Averaging{2, IntraSync::none, 1} == Averaging{2, IntraSync::none, 7}));  // no period without rounds
  BOOST_TEST(!(Averaging{2, IntraSync::sma, 1} == Averaging{2, IntraSync::sma, 2}));
}

// Two exact learners did not pay, but with fewer rounds they do: the MLP at a small batch.
BOOST_AUTO_TEST_CASE(a_second_learner_that_pays_only_with_fewer_rounds) {
  LearnerTuner tuner(kExact, 16, 0.1);
  const auto trials = drive(tuner, {{"1 learner", {1000}},
                                    {"2 learners, SMA every step", {900}},
                                    {"2 learners, SMA every 2 steps", {1150}},
                                    {"2 learners, SMA every 4 steps", {1400, 1350}},
                                    {"2 learners, independent", {1300}}});
  BOOST_TEST(trials == std::vector<std::string>({"1 learner", "2 learners, SMA every step", "2 learners, independent",
                                                 "2 learners, SMA every 4 steps", "2 learners, SMA every 2 steps",
                                                 "1 learner", "2 learners, SMA every 4 steps"}),
             boost::test_tools::per_element());
  BOOST_TEST((tuner.trial() == Averaging{2, IntraSync::sma, 4}));
  BOOST_TEST(tuner.log().back() == "settling on 2 learners, SMA every 4 steps: 1350 samples/s, 1.35x one learner");
  BOOST_TEST(tuner.log().size() == 8u);  // a line per window and the choice
}

// Independent replicas are the most two learners can give: where they do not beat one
// learner by the threshold, no period is measured and one learner it is.
BOOST_AUTO_TEST_CASE(never_slower_than_one_learner) {
  LearnerTuner tuner(kExact, 16, 0.1);
  const auto trials = drive(tuner, {{"1 learner", {1000}}, {"2 learners, SMA every step", {700}},
                                    {"2 learners, independent", {1080}}});  // faster, but within the threshold
  BOOST_TEST(trials.size() == 3u);
  BOOST_TEST((tuner.trial() == kExact));
  BOOST_TEST(tuner.log().back() == "settling on 1 learner: 1000 samples/s, 1.00x one learner");
}

// A window measured while the machine was quieter is not trusted alone: the candidate must
// beat one learner again in adjacent windows, or one learner it is.
BOOST_AUTO_TEST_CASE(a_choice_that_fails_its_side_by_side_check_is_dropped) {
  LearnerTuner tuner(kExact, 2, 0.1);
  const auto trials = drive(tuner, {{"1 learner", {1000, 1500}},
                                    {"2 learners, SMA every step", {1300}},
                                    {"2 learners, SMA every 2 steps", {1400}},
                                    {"2 learners, SMA every 4 steps", {1500}},
                                    {"2 learners, independent", {1600, 1550}}});
  BOOST_TEST(trials.size() == 7u);
  BOOST_TEST(trials[5] == "1 learner");
  BOOST_TEST(trials[6] == "2 learners, independent");
  BOOST_TEST((tuner.trial() == kExact));
  BOOST_TEST(tuner.log().back() == "settling on 1 learner: 1500 samples/s, 1.00x one learner");
}

// Crossbow's count phase settles on 2 (3 adds too little); the period phase then measures 2
// learners with fewer rounds, and exact rounds stay when they are the fastest.
BOOST_AUTO_TEST_CASE(the_count_first_then_its_period) {
  LearnerTuner tuner(kExact, 16, 0.1);
  const auto trials = drive(tuner, {{"1 learner", {1000}},
                                    {"2 learners, SMA every step", {1900}},
                                    {"3 learners, SMA every step", {2000}},
                                    {"2 learners, SMA every 2 steps", {1850}},
                                    {"2 learners, SMA every 4 steps", {1880}},
                                    {"2 learners, independent", {1890}}});
  BOOST_TEST(trials.size() == 8u);  // and the side-by-side check
  BOOST_TEST(trials[2] == "3 learners, SMA every step");
  BOOST_TEST((tuner.trial() == Averaging{2, IntraSync::sma, 1}));
  BOOST_TEST(tuner.log()[2] == "3 learners, SMA every step give 2000 samples/s, not 10% above 1900; the count is 2");
}

BOOST_AUTO_TEST_CASE(independent_replicas_when_they_are_the_fastest) {
  LearnerTuner tuner(kExact, 2, 0.1);
  drive(tuner, {{"1 learner", {1000}},
                {"2 learners, SMA every step", {1500}},
                {"2 learners, SMA every 2 steps", {1600}},
                {"2 learners, SMA every 4 steps", {1700}},
                {"2 learners, independent", {1950}}});
  BOOST_TEST((tuner.trial() == Averaging{2, IntraSync::none, 1}));
  BOOST_TEST(tuner.log()[1] == "2 learners, SMA every step give 1500 samples/s; at the maximum");
}

// Synchronous SGD has no period to tune, and a ceiling of one learner nothing at all.
BOOST_AUTO_TEST_CASE(no_period_phase_without_sma_or_a_second_learner) {
  LearnerTuner average({1, IntraSync::average, 1}, 16, 0.1);
  const auto trials = drive(average, {{"1 learner", {1000}}, {"2 learners, synchronous SGD", {1500}},
                                      {"3 learners, synchronous SGD", {1550}}});
  BOOST_TEST(trials.size() == 5u);  // the count, then the side-by-side check
  BOOST_TEST((average.trial() == Averaging{2, IntraSync::average, 1}));

  LearnerTuner single(kExact, 1, 0.1);
  BOOST_TEST(drive(single, {{"1 learner", {1000}}}).size() == 1u);
  BOOST_TEST((single.trial() == kExact));
}

// A configured period other than 1 is measured in the count phase and is one more candidate.
BOOST_AUTO_TEST_CASE(a_configured_period_is_a_candidate_too) {
  LearnerTuner tuner({1, IntraSync::sma, 3}, 2, 0.1);
  const auto trials = drive(tuner, {{"1 learner", {1000}},
                                    {"2 learners, SMA every 3 steps", {1800}},
                                    {"2 learners, SMA every step", {1500}},
                                    {"2 learners, SMA every 2 steps", {1600}},
                                    {"2 learners, SMA every 4 steps", {1700}},
                                    {"2 learners, independent", {1750}}});
  BOOST_TEST(trials.size() == 8u);
  BOOST_TEST((tuner.trial() == Averaging{2, IntraSync::sma, 3}));
}

// A checkpoint taken mid-tuning: the restored tuner asks for the same trial, keeps the log
// and decides as the original does.
BOOST_AUTO_TEST_CASE(a_restored_tuner_goes_on_where_it_was) {
  LearnerTuner original(kExact, 16, 0.1);
  original.record(1000);  // 1 learner
  original.record(900);   // 2 exact: the count is 1, the period phase begins
  SectionWriter out;
  original.save(out);
  const std::vector<uint8_t> bytes = out.take();
  SectionReader in(bytes, "node");
  LearnerTuner restored(kExact, 16, 0.1);
  restored.restore(in);
  in.finish();
  BOOST_TEST((restored.trial() == original.trial()));
  BOOST_TEST(restored.log() == original.log(), boost::test_tools::per_element());
  // Independent, every 4 steps, every 2 steps; then one learner and every 4 steps again.
  for (double rate : {1250.0, 1300.0, 1200.0, 1000.0}) original.record(rate), restored.record(rate);
  SectionWriter confirming;  // and a round trip mid-check
  restored.save(confirming);
  const std::vector<uint8_t> confirming_bytes = confirming.take();
  SectionReader confirming_in(confirming_bytes, "node");
  LearnerTuner again(kExact, 16, 0.1);
  again.restore(confirming_in);
  BOOST_TEST((again.trial() == Averaging{2, IntraSync::sma, 4}));
  for (LearnerTuner* t : {&original, &again}) t->record(1280.0);
  BOOST_TEST(!again.active());
  BOOST_TEST((again.trial() == original.trial()));
  BOOST_TEST((again.trial() == Averaging{2, IntraSync::sma, 4}));
}
