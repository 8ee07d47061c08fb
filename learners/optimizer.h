#pragma once
// Optimizers over the flat arena: one loop over the parameter span, with state buffers of
// the same layout. The learning rate comes per step from the schedule.
#include "learners/aligned_buffer.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace starling {

struct OptimizerSpec {
  std::string kind = "sgd";  // "sgd" | "adam"
  double momentum = 0.9;
  bool nesterov = false;
  double weight_decay = 0.0;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
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
};

/// SGD: g' = g + λw; v ← μv + g'; w ← w − lr·(nesterov ? g' + μv : v).
class Sgd final : public Optimizer {
 public:
  Sgd(std::size_t n, const OptimizerSpec& spec);
  void step(float* w, const float* g, std::size_t n, float lr) override;
  void reset() override;
  AlignedBuffer<float>* state(int index) override { return index == 0 ? &velocity_ : nullptr; }

 private:
  float momentum_, weight_decay_;
  bool nesterov_;
  AlignedBuffer<float> velocity_;
};

/// Adam with L2 weight decay folded into the gradient (g' = g + λw) and bias correction.
class Adam final : public Optimizer {
 public:
  Adam(std::size_t n, const OptimizerSpec& spec);
  void step(float* w, const float* g, std::size_t n, float lr) override;
  void reset() override;
  AlignedBuffer<float>* state(int index) override;

 private:
  float beta1_, beta2_, epsilon_, weight_decay_;
  int64_t t_ = 0;
  AlignedBuffer<float> m_, v_;
};

/// Throws std::invalid_argument on an unknown kind.
std::unique_ptr<Optimizer> make_optimizer(std::size_t n, const OptimizerSpec& spec);

}  // namespace starling
