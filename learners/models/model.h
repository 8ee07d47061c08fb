#pragma once
// A model: the chain of layers its description lists (learners/models/model_description.h) over one
// flat parameter arena and one gradient arena (same layout). ReLU layers are fused into the
// GEMM epilogues of the layers around them where that is exact (fuse_relus in model.cpp).
#include "learners/models/aligned_buffer.h"
#include "learners/models/layer.h"
#include "learners/models/layer_chain.h"
#include "learners/models/model_spec.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace starling {

class Model {
 public:
  /// Builds the model a spec names; throws std::invalid_argument on an impossible spec.
  explicit Model(const ModelSpec& spec);
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelSpec& spec() const { return spec_; }
  /// The arena's length: every layer's parameters, each padded to 64 bytes.
  std::size_t param_count() const { return params_.size(); }
  /// The layers' parameters alone, without the padding.
  std::size_t trainable_count() const;
  float* params() { return params_.data(); }
  const float* params() const { return params_.data(); }
  float* grads() { return grads_.data(); }
  const float* grads() const { return grads_.data(); }

  /// He initialisation from a seed, or the spec's `initial` weights when it has them (throws
  /// std::invalid_argument when they are not one arena of this model).
  void init(uint64_t seed);
  /// Training, with `key` drawing this step's dropout masks, or evaluation (the default).
  void set_mode(bool training, uint64_t key = 0) { chain_.set_mode(training, key); }

  /// Returns the logits [batch × classes]; valid until the next forward.
  const float* forward(kernels::Backend backend, int batch, const float* x);
  /// Fills grads() from dlogits; needs the activations of the forward just before. With
  /// `update`, applies it to the parameters instead, and grads() is left undefined.
  void backward(kernels::Backend backend, int batch, const float* x, const float* dlogits,
                const ParamUpdate* update = nullptr);

  /// The layers the model runs, ReLUs fused: for profiling a step part by part.
  LayerChain& chain() { return chain_; }

  /// One line per layer with its parameter count.
  std::string describe() const;
  /// A stable string naming every layer and shape: peers compare it before exchanging.
  std::string signature() const;
  /// The arena span of every layer that has parameters (its count, padded to 64 bytes), in
  /// arena order: they add up to param_count(). A joining peer's shape, compared by the
  /// peers it joins.
  std::vector<uint64_t> tensor_sizes() const;
  /// The arena's spans of matrices (Layer::matrix_spans), ascending: what AdamW decays.
  std::vector<ParamSpan> matrix_spans() const { return chain_.matrix_spans(); }

 private:
  ModelSpec spec_;
  LayerChain chain_;
  AlignedBuffer<float> params_, grads_;
};

/// 64-bit FNV-1a over the bytes of a float span, as 16 hex digits: the model checksum.
std::string checksum_hex(const float* data, std::size_t count);

}  // namespace starling
