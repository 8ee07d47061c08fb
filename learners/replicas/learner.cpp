#include "learners/replicas/learner.h"

#include <algorithm>
#include <stdexcept>

namespace starling {
namespace {

// The spec's model, once the batch and the model are known to fit the task.
const ModelSpec& checked_model(const LearnerSpec& spec, const Task& task) {
  if (spec.batch < 1) throw std::invalid_argument("learner: batch must be at least 1");
  task.check_model(spec.model);
  return spec.model;
}

}  // namespace

Learner::Learner(const LearnerSpec& spec, std::shared_ptr<const Task> task)
    : spec_(spec),
      task_(std::move(task)),
      model_(checked_model(spec, *task_)),
      optimizer_(make_optimizer(model_.param_count(), spec.optimizer, model_.matrix_spans())),
      source_(task_->batch_source(spec)) {
  model_.init(spec.seed);
  const std::size_t batch = static_cast<std::size_t>(spec.batch);
  const std::size_t targets = batch * static_cast<std::size_t>(task_->targets_per_sample(spec.model));
  x_.resize(batch * spec.model.input.size());
  targets_.resize(targets);
  dlogits_.resize(targets * static_cast<std::size_t>(spec.model.classes));
}

int64_t Learner::steps_per_epoch() const {
  return std::max<int64_t>(1, static_cast<int64_t>(source_->epoch_samples()) / spec_.batch);
}

double Learner::compute_gradient() { return run_batch(nullptr); }

double Learner::run_batch(const ParamUpdate* update) {
  const int n = source_->fill(steps_, x_.data(), targets_.data());
  model_.set_mode(true, source_->dropout_key(steps_));
  const float* logits = model_.forward(spec_.backend, n, x_.data());
  const double loss = task_->loss(spec_.model, n, logits, targets_.data(), dlogits_.data());
  model_.backward(spec_.backend, n, x_.data(), dlogits_.data(), update);
  ++steps_;
  return loss;
}

double Learner::step(float lr) {
  ParamUpdate update;
  if (optimizer_->fused_step(model_.params(), lr, update)) return run_batch(&update);
  const double loss = compute_gradient();
  optimizer_->step(model_.params(), model_.grads(), model_.param_count(), lr);
  return loss;
}

void save_learner_state(SectionWriter& out, int64_t steps, const Model& model, Optimizer& optimizer) {
  out.put<int64_t>(steps);
  out.floats(model.params(), model.param_count());
  optimizer.save(out);
}

int64_t restore_learner_state(SectionReader& in, Model& model, Optimizer& optimizer) {
  const int64_t steps = in.get<int64_t>();
  if (steps < 0) throw CheckpointError("section '" + in.name() + "': negative step count");
  in.floats(model.params(), model.param_count());
  optimizer.restore(in);
  return steps;
}

void Learner::save(SectionWriter& out) { save_learner_state(out, steps_, model_, *optimizer_); }

void Learner::restore(SectionReader& in) { steps_ = restore_learner_state(in, model_, *optimizer_); }

void Learner::reposition(int64_t step) {
  steps_ = step;
  optimizer_->reset();
}

}  // namespace starling
