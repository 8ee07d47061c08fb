#pragma once
// A layer of a model on NHWC activations. Parameters and their gradients are views into the
// model's flat arena, bound once after construction, so that averaging, all-reduce and the
// codecs see one contiguous vector.
// forward(x → y) and backward(dy → dx, parameter gradients) follow llm.c's pairing;
// gradients are overwritten, not accumulated, by each backward.
#include "kernels/gemm.h"
#include "kernels/ops.h"

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace starling {

/// Per-sample shape, NHWC without the batch: a dense vector is {1, 1, features}.
struct Shape {
  int h = 1, w = 1, c = 1;
  long size() const { return static_cast<long>(h) * w * c; }
  bool operator==(const Shape& o) const { return h == o.h && w == o.w && c == o.c; }
};

/// An SGD step that a backward applies to each layer's parameters as soon as their gradients
/// are known, while they are still in cache; the gradients are then left undefined.
struct ParamUpdate {
  const float* params = nullptr;  // the start of the model's parameter arena
  float* velocity = nullptr;      // the optimizer's velocity, laid out like the parameters
  kernels::SgdArgs sgd;

  float* velocity_of(const float* p) const { return velocity + (p - params); }
  /// One step on the n parameters at p, whose gradient is g.
  void apply(float* p, const float* g, std::size_t n) const {
    kernels::sgd_step(static_cast<long>(n), p, g, velocity_of(p), sgd);
  }
};

/// A run of parameters: an offset into a layer's (or the arena's) parameters and a count.
struct ParamSpan {
  std::size_t offset = 0, count = 0;
  bool operator==(const ParamSpan& o) const { return offset == o.offset && count == o.count; }
};

/// `spans` moved by `by`, appended to `out`: a container's spans from its parts'.
inline void append_shifted(std::vector<ParamSpan>& out, const std::vector<ParamSpan>& spans, std::size_t by) {
  for (const ParamSpan& s : spans) out.push_back({s.offset + by, s.count});
}

class Layer {
 public:
  virtual ~Layer() = default;

  virtual std::string name() const = 0;
  virtual Shape input_shape() const = 0;
  virtual Shape output_shape() const = 0;

  virtual std::size_t param_count() const { return 0; }
  /// The parameters that are matrices or higher (dense weights, convolution kernels), in
  /// this layer's slice: AdamW decays these and not biases or normalisations' scales and
  /// shifts, as nanoGPT decays every parameter of two or more dimensions.
  virtual std::vector<ParamSpan> matrix_spans() const { return {}; }
  /// Points the layer at its slice of the parameter and gradient arenas.
  virtual void bind(float* /*params*/, float* /*grads*/) {}
  /// He initialisation of the bound parameters.
  virtual void init(std::mt19937_64& /*rng*/) {}
  /// Sizes per-batch scratch (im2col buffers, pooling indices) for up to `batch` samples.
  virtual void reserve(int /*batch*/) {}
  /// Training (with `key`, the step's source of randomness) or evaluation: only layers that
  /// behave differently (dropout) care.
  virtual void set_mode(bool /*training*/, uint64_t /*key*/) {}

  virtual void forward(kernels::Backend backend, int batch, const float* x, float* y) = 0;
  /// dx may be null (the first layer needs no input gradient).
  virtual void backward(kernels::Backend backend, int batch, const float* x, const float* y,
                        const float* dy, float* dx) = 0;
  /// backward with `update` applied to the layer's parameters in place of storing their
  /// gradients, fused where the layer can (Dense: into its weight-gradient GEMM). Returns
  /// false, having done nothing, where it cannot; the caller then runs backward and the update.
  virtual bool backward_update(kernels::Backend /*backend*/, int /*batch*/, const float* /*x*/, const float* /*y*/,
                               const float* /*dy*/, float* /*dx*/, const ParamUpdate& /*update*/) {
    return false;
  }

  /// The output is the input's floats unchanged, only the shape differs (Flatten): a chain
  /// passes the input's buffer on as the output, and the gradient back, without a copy.
  virtual bool renames_only() const { return false; }

  /// Fusion hooks used by the model builder (layer_factory.cpp). The layer can apply a ReLU
  /// to its own output (set_relu_output).
  virtual bool can_apply_relu() const { return false; }
  /// The layer can take a ReLU output as input and mask its input gradient by x > 0
  /// (set_relu_input), which is the backward of a ReLU fused into the layer before it.
  virtual bool can_mask_relu_input() const { return false; }
  /// With relu_output, the layer's backward masks its own output gradient by its output, so
  /// the fused ReLU needs no consumer to mask the gradient.
  virtual bool absorbs_relu() const { return false; }
  void set_relu_output(bool on) { relu_output_ = on; }
  void set_relu_input(bool on) { relu_input_ = on; }
  bool relu_output() const { return relu_output_; }
  bool relu_input() const { return relu_input_; }

 protected:
  bool relu_output_ = false;
  bool relu_input_ = false;
};

}  // namespace starling
