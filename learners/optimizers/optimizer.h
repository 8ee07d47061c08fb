#pragma once
// Optimizers over the flat arena: one loop over the parameter span, with state buffers of
// the same layout. The learning rate comes per step from the schedule.
#include "learners/checkpoints/checkpoint.h"
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace starling {

struct OptimizerSpec {
  std::string kind = "sgd";  // "sgd" | "adam" | "adamw"
  double momentum = 0.9;
  bool nesterov = false;
  double weight_decay = 0.0;  // sgd, adam: L2 in the gradient; adamw: decoupled, on matrices
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double clip_norm = 0.0;  // adamw: the gradient's global L2 norm is clipped to this; 0: off
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// w ← update(w, g) with learning rate lr; g is left unchanged and must not alias w.
  virtual void step(float* w, const float* g, std::size_t n, float lr) = 0;
  /// Forgets momentum / moments (a replica reset to the central model).
  virtual void reset() = 0;
  /// The optimizer's state in arena layout, for checkpoints (may be empty).
  virtual AlignedBuffer<float>* state(int index) = 0;
  /// Steps taken since the last reset, where the update depends on it (Adam's bias correction).
  virtual int64_t step_count() const { return 0; }
  /// The step as a ParamUpdate that the model's backward applies layer by layer (for the
  /// parameter arena at `params`), where this optimizer has that form; false otherwise.
  virtual bool fused_step(const float* /*params*/, float /*lr*/, ParamUpdate& /*out*/) { return false; }
  virtual void set_step_count(int64_t /*steps*/) {}

  /// Every state buffer and the step count, for a checkpoint section; restore() reads them
  /// back into an optimizer of the same kind and size (CheckpointError otherwise).
  void save(SectionWriter& out);
  void restore(SectionReader& in);
};

/// SGD: g' = g + λw; v ← μv + g'; w ← w − lr·(nesterov ? g' + μv : v).
class Sgd final : public Optimizer {
 public:
  Sgd(std::size_t n, const OptimizerSpec& spec);
  void step(float* w, const float* g, std::size_t n, float lr) override;
  bool fused_step(const float* params, float lr, ParamUpdate& out) override;
  void reset() override;
  AlignedBuffer<float>* state(int index) override { return index == 0 ? &velocity_ : nullptr; }

 private:
  float momentum_, weight_decay_;
  bool nesterov_;
  AlignedBuffer<float> velocity_;
};

/// Adam's state, shared by Adam and AdamW: the moments m and v and the step count.
class AdamMoments : public Optimizer {
 public:
  explicit AdamMoments(std::size_t n) : m_(n), v_(n) {}
  void reset() override;
  AlignedBuffer<float>* state(int index) override;
  int64_t step_count() const override { return t_; }
  void set_step_count(int64_t steps) override { t_ = steps; }

 protected:
  int64_t t_ = 0;
  AlignedBuffer<float> m_, v_;
};

/// Adam with L2 weight decay folded into the gradient (g' = g + λw) and bias correction.
class Adam final : public AdamMoments {
 public:
  Adam(std::size_t n, const OptimizerSpec& spec);
  void step(float* w, const float* g, std::size_t n, float lr) override;

 private:
  float beta1_, beta2_, epsilon_, weight_decay_;
};

/// AdamW (Loshchilov and Hutter 2019) as PyTorch's torch.optim.AdamW with nanoGPT's groups:
/// the gradient is first scaled to a global L2 norm of at most clip_norm (when set, as
/// clip_grad_norm_ does: by clip_norm / (‖g‖ + 1e-6) where that is below 1), then Adam's
/// bias-corrected step, and weight decay decoupled from it, w·(1 − lr·λ), on the matrices
/// alone (Model::matrix_spans: dense weights, convolution kernels; not biases or norms).
/// One pass over the arena, span by span (learners/optimizers/adamw_update.h).
class AdamW final : public AdamMoments {
 public:
  /// `decayed`: ascending, disjoint spans within [0, n); throws std::invalid_argument otherwise.
  AdamW(std::size_t n, const OptimizerSpec& spec, const std::vector<ParamSpan>& decayed);
  void step(float* w, const float* g, std::size_t n, float lr) override;
  /// The gradient's global L2 norm at the last step, before clipping.
  double last_grad_norm() const { return grad_norm_; }

 private:
  struct Segment {
    std::size_t offset, count;
    bool decay;
  };
  float beta1_, beta2_, epsilon_, weight_decay_, clip_norm_;
  double grad_norm_ = 0.0;
  std::vector<Segment> segments_;  // [0, n) in order, each decayed or not
};

/// `matrices`: the model's matrix spans, which adamw decays (the others take no decay).
/// Throws std::invalid_argument on an unknown kind.
std::unique_ptr<Optimizer> make_optimizer(std::size_t n, const OptimizerSpec& spec,
                                          const std::vector<ParamSpan>& matrices = {});

}  // namespace starling
