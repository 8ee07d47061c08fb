// Layer "swiglu": the SwiGLU feed-forward on each token of {1, T, C} (Shazeer 2020; LLaMA's
// MLP), out = W2 · (silu(W1 x) ⊙ (W3 x)) with `size` hidden units, silu(a) = a·σ(a). It is
// built as three layers: W1 and W3 fused into one per-token dense C → 2·size (weights
// N(0, init_std); a token's first `size` outputs are W1 x, the next W3 x), the gate below,
// and W2, a per-token dense size → C (N(0, projection_std)). The dense layers have biases,
// as nanoGPT's MLP does.
#include "learners/layers/token_dense.h"
#include "learners/models/layer_row.h"

#include <cmath>
#include <sstream>

namespace starling::layer_kinds {
namespace {

// {1, T, 2H} → {1, T, H}: y = silu(a) ⊙ b for each token's halves a and b. The backward
// takes σ(a) again from x, so the forward keeps nothing: dy/da = b·σ(a)·(1 + a·(1 − σ(a))),
// dy/db = silu(a).
class SwiGluGate final : public Layer {
 public:
  SwiGluGate(int context, int hidden) : context_(context), hidden_(hidden) {}
  std::string name() const override { return "swiglu_gate"; }
  Shape input_shape() const override { return {1, context_, 2 * hidden_}; }
  Shape output_shape() const override { return {1, context_, hidden_}; }

  void forward(kernels::Backend, int batch, const float* x, float* y) override {
    const long tokens = static_cast<long>(batch) * context_, h = hidden_;
    for (long t = 0; t < tokens; ++t) {
      const float *a = x + t * 2 * h, *b = a + h;
      float* out = y + t * h;
      for (long j = 0; j < h; ++j) out[j] = a[j] / (1.f + std::exp(-a[j])) * b[j];
    }
  }

  void backward(kernels::Backend, int batch, const float* x, const float*, const float* dy, float* dx) override {
    if (!dx) return;
    const long tokens = static_cast<long>(batch) * context_, h = hidden_;
    for (long t = 0; t < tokens; ++t) {
      const float *a = x + t * 2 * h, *b = a + h, *g = dy + t * h;
      float *da = dx + t * 2 * h, *db = da + h;
      for (long j = 0; j < h; ++j) {
        const float s = 1.f / (1.f + std::exp(-a[j]));
        da[j] = g[j] * b[j] * s * (1.f + a[j] * (1.f - s));
        db[j] = g[j] * a[j] * s;
      }
    }
  }

 private:
  int context_, hidden_;
};

constexpr LayerKey kKeys[] = {
    integer_key("size", LayerKey::kRequired, 1, 1 << 20, "the hidden width"),
    number_key("init_std", kGptInitStd, 0, 1, true, false),
    number_key("projection_std", kGptInitStd, 0, 1, true, false),
};

Shape shape(LayerDesc& d, DescribeContext& context) {
  if (d.in.h != 1)
    context.fail("kind", "swiglu: its input " + std::to_string(d.in.h) + "x" + std::to_string(d.in.w) + "x" +
                             std::to_string(d.in.c) + " is not a sequence of tokens (1xTxC)");
  return d.in;
}

void make(const LayerDesc& d, LayerBuild&, Layers& out) {
  const int context = d.in.w, width = d.in.c, hidden = d.integer("size");
  out.push_back(std::make_unique<TokenDense>(context, width, 2 * hidden, d.single("init_std")));
  out.push_back(std::make_unique<SwiGluGate>(context, hidden));
  out.push_back(std::make_unique<TokenDense>(context, hidden, width, d.single("projection_std")));
}

// W1 and W3 with their biases, W2 with its.
double parameters(const LayerDesc& d) {
  const double c = d.in.c, h = d.integer("size");
  return 3.0 * c * h + 2.0 * h + c;
}

std::string what(const LayerDesc& d) {
  std::ostringstream s;
  s << "swiglu of " << d.integer("size") << " hidden units on each of " << d.in.w << " tokens of " << d.in.c;
  return s.str();
}

template <std::string (*key)(std::string_view, const std::string&)>
std::string keys(const LayerDesc& d) {
  return key("size", std::to_string(d.integer("size"))) + key("init_std", number_text(d.single("init_std"), true)) +
         key("projection_std", number_text(d.single("projection_std"), true));
}

constexpr LayerRow row() {
  LayerRow r;
  r.name = "swiglu";
  r.doc = "W2·(silu(W1 x) ⊙ W3 x) on each token, `size` hidden units";
  r.shape = &shape, r.make = &make, r.parameters = &parameters, r.what = &what;
  // The fused W1 x, W3 x [T × 2H] and the gate's output [T × H].
  r.activations = [](const LayerDesc& d) { return 3.0 * d.in.w * d.integer("size"); };
  r.json = &keys<json_key>, r.toml = &keys<toml_key>;
  return with_keys(r, kKeys);
}

}  // namespace

extern constexpr LayerRow swiglu_row = row();

}  // namespace starling::layer_kinds
