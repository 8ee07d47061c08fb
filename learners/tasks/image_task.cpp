#include "learners/tasks/image_task.h"

#include "kernels/ops.h"
#include "learners/tasks/loss.h"

#include <algorithm>
#include <stdexcept>

namespace starling {
namespace {

// Each epoch's shuffle of the learner's shard, cut into full batches.
class ImageBatches final : public BatchSource {
 public:
  ImageBatches(const LearnerSpec& spec, const Dataset& train)
      : spec_(spec),
        train_(train),
        sampler_(make_sampler(spec, train)),
        steps_per_epoch_(std::max<int64_t>(1, sampler_.shard_size() / std::max(1, spec.batch))) {}

  int fill(int64_t step, float* x, int32_t* labels) override {
    const auto& order = sampler_.epoch(step / steps_per_epoch_);
    const int n = static_cast<int>(std::min<int64_t>(spec_.batch, static_cast<int64_t>(order.size())));
    const std::size_t first = static_cast<std::size_t>((step % steps_per_epoch_) * spec_.batch);
    train_.gather(order.data() + first, n, x, labels);
    if (spec_.flip_labels)
      for (int i = 0; i < n; ++i) labels[i] = spec_.model.classes - 1 - labels[i];
    return n;
  }
  uint64_t dropout_key(int64_t step) const override {
    return mix_seed(mix_seed(spec_.seed, static_cast<uint64_t>(spec_.shard)), static_cast<uint64_t>(step));
  }
  uint64_t epoch_samples() const override { return sampler_.shard_size(); }

 private:
  LearnerSpec spec_;
  Dataset train_;
  Sampler sampler_;
  int64_t steps_per_epoch_;
};

}  // namespace

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

void ImageTask::check_model(const ModelSpec& model) const {
  if (!(train_.shape() == model.input) || train_.classes() != model.classes)
    throw std::invalid_argument("learner: the model's input or classes do not match the dataset");
}

void ImageTask::check_learners(int learners, const LearnerSpec& spec) const {
  const std::size_t samples = spec.part ? spec.part->size() : train_.size();
  if (learners > 0 && static_cast<std::size_t>(learners) > samples)
    throw std::invalid_argument(spec.part ? "more learners than samples in this peer's part of the training set"
                                          : "more learners than training samples");
}

std::unique_ptr<BatchSource> ImageTask::batch_source(const LearnerSpec& spec) const {
  return std::make_unique<ImageBatches>(spec, train_);
}

double ImageTask::loss(const ModelSpec& model, int n, const float* logits, const int32_t* labels, float* dlogits) const {
  return softmax_cross_entropy(n, model.classes, logits, labels, dlogits);
}

Evaluation ImageTask::evaluate(Model& model, kernels::Backend backend) const { return starling::evaluate(model, backend, test_); }

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
