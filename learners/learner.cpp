#include "learners/learner.h"

#include "kernels/ops.h"
#include "learners/loss.h"

#include <algorithm>
#include <stdexcept>

namespace starling {

Sampler make_sampler(const LearnerSpec& spec, const Dataset& train) {
  const uint64_t seed = mix_seed(spec.seed, 0x5a3d1e);
  if (!spec.part) return Sampler(train.size(), seed, spec.shard, spec.shards);
  if (std::any_of(spec.part->begin(), spec.part->end(), [&](uint32_t i) { return i >= train.size(); }))
    throw std::invalid_argument("learner: the peer's part names a sample beyond the training set");
  return Sampler(*spec.part, seed, spec.shard, spec.shards);
}

std::vector<int64_t> epoch_label_counts(const std::vector<LearnerSpec>& specs, const Dataset& train) {
  std::vector<bool> seen(train.size(), false);
  std::vector<int64_t> counts(static_cast<std::size_t>(train.classes()), 0);
  for (const LearnerSpec& spec : specs) {
    Sampler sampler = make_sampler(spec, train);
    for (uint32_t j : sampler.epoch(0))
      if (!seen[j]) seen[j] = true, ++counts[train.label(j)];
  }
  return counts;
}

Learner::Learner(const LearnerSpec& spec, const Dataset& train)
    : spec_(spec),
      train_(train),
      model_(spec.model),
      optimizer_(make_optimizer(model_.param_count(), spec.optimizer, model_.matrix_spans())),
      sampler_(make_sampler(spec, train)),
      steps_per_epoch_(std::max<int64_t>(1, sampler_.shard_size() / std::max(1, spec.batch))) {
  if (spec.batch < 1) throw std::invalid_argument("learner: batch must be at least 1");
  if (!(train.shape() == spec.model.input) || train.classes() != spec.model.classes)
    throw std::invalid_argument("learner: the model's input or classes do not match the dataset");
  model_.init(spec.seed);
  x_.resize(static_cast<std::size_t>(spec.batch) * train.shape().size());
  dlogits_.resize(static_cast<std::size_t>(spec.batch) * train.classes());
  labels_.resize(static_cast<std::size_t>(spec.batch));
}

double Learner::compute_gradient() { return run_batch(nullptr); }

double Learner::run_batch(const ParamUpdate* update) {
  const int64_t epoch = steps_ / steps_per_epoch_;
  const auto& order = sampler_.epoch(epoch);
  const int batch = std::min<int64_t>(spec_.batch, static_cast<int64_t>(order.size()));
  const std::size_t first = static_cast<std::size_t>((steps_ % steps_per_epoch_) * spec_.batch);
  train_.gather(order.data() + first, batch, x_.data(), labels_.data());
  if (spec_.flip_labels)
    for (int i = 0; i < batch; ++i) labels_[i] = spec_.model.classes - 1 - labels_[i];
  // Dropout's masks: distinct per learner and step, the same again after a resume.
  model_.set_mode(true, mix_seed(mix_seed(spec_.seed, static_cast<uint64_t>(spec_.shard)), static_cast<uint64_t>(steps_)));
  const float* logits = model_.forward(spec_.backend, batch, x_.data());
  const double loss = softmax_cross_entropy(batch, spec_.model.classes, logits, labels_.data(), dlogits_.data());
  model_.backward(spec_.backend, batch, x_.data(), dlogits_.data(), update);
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

Evaluation evaluate(Model& model, kernels::Backend backend, const Dataset& data, int batch) {
  const int classes = model.spec().classes;
  AlignedBuffer<float> x(static_cast<std::size_t>(batch) * data.shape().size());
  std::vector<int32_t> labels(static_cast<std::size_t>(batch)), predicted(static_cast<std::size_t>(batch));
  std::vector<uint32_t> indices(static_cast<std::size_t>(batch));
  int64_t correct = 0;
  double loss_sum = 0.0;
  model.set_mode(false);
  for (uint32_t start = 0; start < data.size(); start += static_cast<uint32_t>(batch)) {
    const int n = static_cast<int>(std::min<uint32_t>(static_cast<uint32_t>(batch), data.size() - start));
    for (int i = 0; i < n; ++i) indices[i] = start + static_cast<uint32_t>(i);
    data.gather(indices.data(), n, x.data(), labels.data());
    const float* logits = model.forward(backend, n, x.data());
    loss_sum += softmax_cross_entropy(n, classes, logits, labels.data(), nullptr) * n;
    kernels::argmax_rows(n, classes, logits, predicted.data());
    for (int i = 0; i < n; ++i) correct += predicted[i] == labels[i];
  }
  return {static_cast<double>(correct) / data.size(), loss_sum / data.size()};
}

}  // namespace starling
