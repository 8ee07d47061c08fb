#pragma once
// Dropout (training only): each value is kept with probability 1 − rate and scaled by
// 1/(1 − rate), else zeroed; in evaluation the layer passes its input through. The mask is a
// pure function of (the step's key, this layer's salt, the value's index), so the backward
// pass recomputes it instead of storing it, and a resumed run draws the same masks without
// any generator state to checkpoint: the key comes from the learner's seed, shard and step.
#include "learners/models/layer.h"

#include <cstdint>

namespace starling {

class Dropout final : public Layer {
 public:
  /// Throws std::invalid_argument unless 0 ≤ rate < 1.
  Dropout(Shape in, double rate, uint64_t salt);

  std::string name() const override;
  Shape input_shape() const override { return in_; }
  Shape output_shape() const override { return in_; }
  void set_mode(bool training, uint64_t key) override { training_ = training, key_ = key; }
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override;
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override;

 private:
  // v·scale where the value at `index` is kept, else 0.
  void apply(long n, const float* v, float* out) const;

  Shape in_;
  double rate_;
  uint64_t salt_;
  bool training_ = false;
  uint64_t key_ = 0;
};

}  // namespace starling
