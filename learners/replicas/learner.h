#pragma once
// One model replica training on its own draws of its task's data: the unit of work that a
// learner actor runs, for any task (learners/tasks/task.h). Owns its model (parameters and
// gradients in the flat arena), optimizer state, batch source and batch buffers. No threads,
// no messaging: callers drive step().
#include "learners/checkpoints/checkpoint.h"
#include "learners/tasks/task.h"

#include <memory>

namespace starling {

/// A learner's checkpoint section: its step count, the model's parameters and the
/// optimizer's state. restore_learner_state() throws CheckpointError on a negative step
/// count or arrays of another length.
void save_learner_state(SectionWriter& out, int64_t steps, const Model& model, Optimizer& optimizer);
int64_t restore_learner_state(SectionReader& in, Model& model, Optimizer& optimizer);

class Learner {
 public:
  /// Throws std::invalid_argument when the batch is below one, the model does not fit the
  /// task's data or the learner has none to draw.
  Learner(const LearnerSpec& spec, std::shared_ptr<const Task> task);

  Model& model() { return model_; }
  const Model& model() const { return model_; }
  Optimizer& optimizer() { return *optimizer_; }
  const LearnerSpec& spec() const { return spec_; }

  /// Full batches in an epoch of this learner's draws (at least 1).
  int64_t steps_per_epoch() const;
  int64_t steps() const { return steps_; }

  /// Forward and backward on the next batch: fills model().grads(); returns the batch's mean loss.
  double compute_gradient();
  /// compute_gradient() then one optimizer step at learning rate lr; an optimizer with a
  /// fused form (SGD) steps each layer inside the backward, and grads() is then undefined.
  double step(float lr);

  /// The replica, its optimizer state and its position in the data, for a checkpoint. The
  /// batch source needs only the step count.
  void save(SectionWriter& out);
  /// Continues exactly where save() was called (same spec); CheckpointError otherwise.
  void restore(SectionReader& in);
  /// Goes on from `step` (a running job's position) with the model as it now is: the next
  /// step draws that step's batch, and the optimizer starts afresh.
  void reposition(int64_t step);

 private:
  LearnerSpec spec_;
  std::shared_ptr<const Task> task_;
  Model model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<BatchSource> source_;
  int64_t steps_ = 0;
  AlignedBuffer<float> x_, dlogits_;
  std::vector<int32_t> targets_;

  // Forward and backward on the next batch, with the optimizer step fused where `update` is set.
  double run_batch(const ParamUpdate* update);
};

}  // namespace starling
