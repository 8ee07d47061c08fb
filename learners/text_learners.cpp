#include "learners/text_learners.h"

#include "learners/sma.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace starling {
namespace {

int checked_learners(const TextSmaSpec& sma) {
  if (sma.learners < 1) throw std::invalid_argument("text learners: at least one learner");
  if (sma.sync_every < 1) throw std::invalid_argument("text learners: sync_every must be at least 1");
  return sma.learners;
}

std::string section_of(int j) { return "learner." + std::to_string(j); }

}  // namespace

TextLearners::TextLearners(const TextLearnerSpec& spec, const TextSmaSpec& sma, const TextCorpus& corpus, const TextPart& part)
    : sync_every_(sma.sync_every), threads_(checked_learners(sma)) {
  for (int j = 0; j < sma.learners; ++j) {
    TextLearnerSpec own = spec;
    own.learner = j;
    learners_.push_back(std::make_unique<TextLearner>(own, corpus, part));
  }
  losses_.resize(learners_.size());
  if (size() == 1) return;
  central_ = std::make_unique<Model>(spec.model);
  central_->init(spec.seed);  // the replicas' own initial model
  const std::size_t n = central_->param_count();
  z_prev_.resize(n);
  std::copy(central_->params(), central_->params() + n, z_prev_.data());
  group_ = std::make_unique<sma::SmaGroup>(central_->params(), z_prev_.data(), size(), n, sma::alpha_for(sma.alpha, size()),
                                           static_cast<float>(sma.momentum));
}

double TextLearners::step(float lr) {
  const bool round = group_ && (steps() + 1) % sync_every_ == 0;
  threads_.run([&](int j) {
    TextLearner& learner = *learners_[static_cast<std::size_t>(j)];
    try {
      losses_[static_cast<std::size_t>(j)] = learner.step(lr);
    } catch (const std::exception& e) {
      if (group_) group_->abort(e.what());  // the others must not wait for this learner's round
      throw;
    }
    if (round && !group_->round(j, learner.model().params())) {
      const std::string why = group_->why();  // the failed learner's own error
      throw std::runtime_error(why.empty() ? "text learner " + std::to_string(j) + ": the SMA round was abandoned" : why);
    }
  });
  double sum = 0.0;
  for (double loss : losses_) sum += loss;  // in learner order: the same bits whoever finished first
  return sum / static_cast<double>(losses_.size());
}

void TextLearners::save(Checkpoint& c) {
  Model& z = central();
  c.add("central", SectionWriter().floats(z.params(), z.param_count()).take());
  if (central_) c.add("central_prev", SectionWriter().floats(z_prev_.data(), z_prev_.size()).take());
  for (int j = 0; j < size(); ++j) {
    SectionWriter state;
    learners_[static_cast<std::size_t>(j)]->save(state);
    c.add(section_of(j), state.take());
  }
}

void TextLearners::reposition(int64_t step) {
  Model& z = central();
  for (auto& learner : learners_) {
    if (central_) std::copy(z.params(), z.params() + z.param_count(), learner->model().params());
    learner->reposition(step);
  }
  if (central_) std::copy(z.params(), z.params() + z.param_count(), z_prev_.data());
}

void TextLearners::restore(const Checkpoint& c) {
  for (int j = 0; j < size(); ++j) {
    SectionReader state = c.reader(section_of(j));
    learners_[static_cast<std::size_t>(j)]->restore(state);
    state.finish();
    if (learners_[static_cast<std::size_t>(j)]->steps() != steps())
      throw CheckpointError("section '" + section_of(j) + "': a step count other than learner 0's");
  }
  if (!central_) return;  // z is learner 0's model
  SectionReader z = c.reader("central");
  z.floats(central_->params(), central_->param_count());
  z.finish();
  SectionReader prev = c.reader("central_prev");
  prev.floats(z_prev_.data(), z_prev_.size());
  prev.finish();
}

}  // namespace starling
