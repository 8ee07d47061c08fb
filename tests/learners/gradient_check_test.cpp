// Every layer's and both losses' analytic gradients against central finite differences in
// double precision, on both kernel backends; and whole models (with fused ReLUs and pools,
// and the residual network) likewise.
#define BOOST_TEST_MODULE learners_gradients
#include <boost/test/unit_test.hpp>

#include "learners/gpt.h"
#include "learners/layer_chain.h"
#include "learners/layers/causal_attention.h"
#include "learners/layers/conv2d.h"
#include "learners/layers/dense.h"
#include "learners/layers/dropout.h"
#include "learners/layers/elementwise.h"
#include "learners/layers/embedding.h"
#include "learners/layers/gelu.h"
#include "learners/layers/group_norm.h"
#include "learners/layers/layer_norm.h"
#include "learners/layers/pooling.h"
#include "learners/layers/residual.h"
#include "learners/layers/rms_norm.h"
#include "learners/layers/tied_head.h"
#include "learners/layers/token_dense.h"
#include "learners/loss.h"
#include "learners/model.h"
#include "platform/cpu_features.h"
#include "tests/isa_paths.h"

#include <cmath>
#include <array>
#include <functional>
#include <memory>
#include <random>
#include <vector>

using namespace starling;
using kernels::Backend;

namespace {

std::vector<float> random_vector(std::size_t n, std::mt19937_64& rng, float scale = 1.f) {
  std::normal_distribution<float> normal(0.f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// Compares an analytic gradient with the central difference (f(v+h) − f(v−h)) / 2h at up to
// `samples` coordinates. Where the differences at h and h/2 disagree, or the one-sided
// slopes on either side of v do, a step crossed a kink (ReLU at 0, a change of max-pool
// winner) and says nothing: such coordinates are skipped, and must stay rare.
void expect_gradient(const char* what, std::vector<float>& v, const std::vector<float>& analytic,
                     const std::function<double()>& f, int samples = 40) {
  double one_sided_gap = 0.0;  // |right slope − left slope| of the last central difference
  auto central = [&](std::size_t i, float h) {
    const float saved = v[i];
    const double at = f();
    v[i] = saved + h;
    const double up = f();
    v[i] = saved - h;
    const double down = f();
    v[i] = saved;
    one_sided_gap = std::fabs((up - at) - (at - down)) / static_cast<double>(h);
    return (up - down) / (2.0 * static_cast<double>(h));
  };
  std::mt19937_64 pick(7);
  int kinks = 0, checked = 0;
  for (int s = 0; s < samples && !v.empty(); ++s) {
    const std::size_t i = v.size() <= static_cast<std::size_t>(samples) ? static_cast<std::size_t>(s) % v.size() : pick() % v.size();
    const double numeric = central(i, 4e-3f), gap = one_sided_gap, finer = central(i, 2e-3f);
    const double tolerance = 2e-3 + 2e-2 * std::fabs(numeric);
    if (std::fabs(numeric - finer) > tolerance || gap > tolerance) {
      ++kinks;
      continue;
    }
    ++checked;
    BOOST_TEST_CONTEXT(what << " coordinate " << i) { BOOST_TEST(std::fabs(analytic[i] - numeric) <= tolerance); }
  }
  BOOST_TEST_CONTEXT(what) { BOOST_TEST(kinks * 10 <= checked); }
}

// L = Σ y ⊙ r for fixed random r, so dL/dy = r.
double weighted_sum(const float* y, const std::vector<float>& r) {
  double sum = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) sum += static_cast<double>(y[i]) * r[i];
  return sum;
}

void check_layer(Layer& layer, int batch, Backend backend, std::mt19937_64& rng) {
  std::vector<float> params = random_vector(layer.param_count(), rng, 0.5f);
  std::vector<float> grads(layer.param_count());
  layer.bind(params.data(), grads.data());
  layer.reserve(batch);
  std::vector<float> x = random_vector(static_cast<std::size_t>(batch * layer.input_shape().size()), rng);
  const std::size_t out = static_cast<std::size_t>(batch * layer.output_shape().size());
  std::vector<float> y(out), r = random_vector(out, rng), dx(x.size());
  auto loss = [&] {
    layer.forward(backend, batch, x.data(), y.data());
    return weighted_sum(y.data(), r);
  };
  loss();
  layer.backward(backend, batch, x.data(), y.data(), r.data(), dx.data());
  const std::vector<float> dparams = grads;
  expect_gradient("input", x, dx, loss);
  expect_gradient("params", params, dparams, loss);
}

// The backends this build has (oneDNN is optional at configure time), oneDNN first.
const std::vector<Backend> kBackends = [] {
  std::vector<Backend> out;
  for (Backend b : {Backend::onednn, Backend::native})
    if (kernels::backend_available(b)) out.push_back(b);
  return out;
}();

}  // namespace

BOOST_AUTO_TEST_CASE(dense_layer) {
  std::mt19937_64 rng(1);
  for (Backend b : kBackends) {
    Dense dense(13, 7);
    check_layer(dense, 5, b, rng);
  }
}

BOOST_AUTO_TEST_CASE(conv2d_layer_with_stride_and_padding) {
  std::mt19937_64 rng(2);
  for (Backend b : kBackends) {
    Conv2D plain(Shape{7, 6, 3}, 4, 3);
    check_layer(plain, 2, b, rng);
    Conv2D strided(Shape{7, 7, 2}, 5, 3, 2, 1);
    check_layer(strided, 3, b, rng);
    // Stride 1, "same" padding, channels in 16s: the direct convolution on the native
    // backend where the CPU has it (im2col on oneDNN).
    Conv2D same(Shape{5, 9, 16}, 32, 3, 1, 1);
    check_layer(same, 2, b, rng);
    // Channels in 16s without padding (the CNN's second layer): the direct forward and
    // weight gradient, the input gradient through im2col.
    Conv2D valid(Shape{6, 9, 16}, 16, 3);
    check_layer(valid, 2, b, rng);
    // Fewer than 16 input channels: the direct forward and weight gradient, any padding; the
    // input gradient through im2col.
    Conv2D grey(Shape{7, 9, 1}, 16, 5);
    check_layer(grey, 2, b, rng);
    Conv2D rgb(Shape{5, 6, 3}, 32, 3, 1, 1);
    check_layer(rgb, 2, b, rng);
  }
}

// The direct convolution (native backend, where the CPU has it) and im2col + GEMM (oneDNN)
// give the same output and gradients, with the input's ReLU mask: for channels in 16s with
// "same" padding and with none, and for a narrow input with none (direct forward and weight
// gradient).
void expect_paths_agree(Conv2D& conv, std::mt19937_64& rng) {
  conv.set_relu_input(true);
  std::vector<float> params = random_vector(conv.param_count(), rng, 0.5f), grads(conv.param_count());
  conv.bind(params.data(), grads.data());
  const int batch = 3;
  const std::size_t in = batch * conv.input_shape().size(), out = batch * conv.output_shape().size();
  const std::vector<float> x = random_vector(in, rng), dy = random_vector(out, rng);
  std::vector<float> y[2], dx[2], dw[2];
  for (int i = 0; i < 2; ++i) {
    const Backend b = kBackends[i];
    y[i].resize(out), dx[i].resize(in);
    conv.forward(b, batch, x.data(), y[i].data());
    conv.backward(b, batch, x.data(), y[i].data(), dy.data(), dx[i].data());
    dw[i] = grads;
  }
  auto close = [](const std::vector<float>& a, const std::vector<float>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(std::fabs(a[i] - b[i]) <= 1e-4f * (1.f + std::fabs(b[i])))) return false;
    return true;
  };
  BOOST_TEST(close(y[1], y[0]));
  BOOST_TEST(close(dx[1], dx[0]));
  BOOST_TEST(close(dw[1], dw[0]));
  long masked = 0;
  for (std::size_t i = 0; i < in; ++i) masked += x[i] <= 0.f && dx[1][i] == 0.f;
  BOOST_TEST(masked > static_cast<long>(in) / 4);
}

BOOST_AUTO_TEST_CASE(conv2d_direct_and_im2col_paths_agree) {
  if (kBackends.size() < 2) return;  // no oneDNN in this build: nothing to agree with
  std::mt19937_64 rng(12);
  Conv2D wide(Shape{6, 17, 32}, 16, 3, 1, 1, false);
  expect_paths_agree(wide, rng);
  Conv2D narrow(Shape{11, 28, 1}, 32, 5);
  expect_paths_agree(narrow, rng);
  Conv2D valid(Shape{12, 12, 32}, 64, 5);
  expect_paths_agree(valid, rng);
}

// A max pool fused into the convolution before it (Conv2D::set_max_pool): narrow and wide
// inputs, with "same" padding (the direct input gradient) and without.
BOOST_AUTO_TEST_CASE(conv2d_with_a_fused_max_pool) {
  std::mt19937_64 rng(13);
  for (Backend b : kBackends) {
    Conv2D grey(Shape{8, 10, 1}, 16, 3);
    grey.set_max_pool(2);
    check_layer(grey, 2, b, rng);
    Conv2D same(Shape{6, 9, 16}, 16, 3, 1, 1);
    same.set_max_pool(2);
    check_layer(same, 2, b, rng);
  }
  Conv2D small(Shape{4, 4, 1}, 16, 3);
  BOOST_CHECK_THROW(small.set_max_pool(3), std::invalid_argument);  // a 2×2 output
}

// The fused pool gives what the convolution and a MaxPool2D after it give, with the ReLUs
// fused as a model builds them, on batches the fused layer cuts into several chunks (its
// unpooled output is kept a chunk at a time): the output and input gradient per sample, the
// parameter gradients summed over the chunks.
void expect_fused_pool_agrees(Shape in, int out_c, int kernel, int pad, int batch, Backend backend, std::mt19937_64& rng) {
  Conv2D plain(in, out_c, kernel, 1, pad), fused(in, out_c, kernel, 1, pad);
  for (Conv2D* c : {&plain, &fused}) c->set_relu_output(true), c->set_relu_input(true);
  fused.set_max_pool(2);
  MaxPool2D pool(plain.output_shape(), 2, 2);
  std::vector<float> params = random_vector(plain.param_count(), rng, 0.5f), grads[2];
  const std::size_t in_n = batch * in.size(), mid = batch * plain.output_shape().size(), out = batch * pool.output_shape().size();
  BOOST_REQUIRE(fused.output_shape() == pool.output_shape());
  const std::vector<float> x = random_vector(in_n, rng), dy = random_vector(out, rng);
  std::vector<float> y[2], dx[2], conv_y(mid), conv_dy(mid);
  for (int i = 0; i < 2; ++i) grads[i].resize(params.size()), y[i].resize(out), dx[i].resize(in_n);
  plain.bind(params.data(), grads[0].data());
  plain.forward(backend, batch, x.data(), conv_y.data());
  pool.forward(backend, batch, conv_y.data(), y[0].data());
  pool.backward(backend, batch, conv_y.data(), y[0].data(), dy.data(), conv_dy.data());
  plain.backward(backend, batch, x.data(), conv_y.data(), conv_dy.data(), dx[0].data());
  fused.bind(params.data(), grads[1].data());
  fused.forward(backend, batch, x.data(), y[1].data());
  fused.backward(backend, batch, x.data(), y[1].data(), dy.data(), dx[1].data());
  auto close = [](const std::vector<float>& a, const std::vector<float>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(std::fabs(a[i] - b[i]) <= 1e-4f * (1.f + std::fabs(b[i])))) return false;
    return true;
  };
  BOOST_TEST(y[1] == y[0]);
  BOOST_TEST(close(dx[1], dx[0]));
  BOOST_TEST(close(grads[1], grads[0]));
}

BOOST_AUTO_TEST_CASE(fused_max_pool_matches_convolution_then_pool) {
  std::mt19937_64 rng(14);
  for (Backend b : kBackends) {
    expect_fused_pool_agrees(Shape{66, 66, 1}, 32, 3, 0, 3, b, rng);    // 512 KB a sample: a chunk each
    expect_fused_pool_agrees(Shape{36, 36, 16}, 32, 3, 1, 5, b, rng);   // 162 KB a sample: chunks of 3
    expect_fused_pool_agrees(Shape{12, 12, 32}, 64, 5, 0, 3, b, rng);   // the CNN's second layer
    expect_fused_pool_agrees(Shape{17, 15, 16}, 16, 3, 0, 2, b, rng);   // odd sides: a row and column past the windows
  }
  // Without AVX-512 the native backend's convolutions go through im2col, chunked the same way.
  for (platform::Isa isa : {platform::Isa::scalar, platform::Isa::avx2}) {
    platform::force_isa(isa);
    expect_fused_pool_agrees(Shape{66, 66, 1}, 32, 3, 0, 2, Backend::native, rng);
    expect_fused_pool_agrees(Shape{17, 15, 16}, 16, 3, 1, 2, Backend::native, rng);
  }
  platform::force_isa(platform::detected_isa());
  Model cnn(ModelSpec{"cnn", {}, {28, 28, 1}, 10, {}});  // pools fused, the signature as before
  BOOST_TEST(cnn.signature() ==
             "28x28x1|conv2d(5x5x32, relu)|maxpool2d(2)|conv2d(5x5x64, relu)|maxpool2d(2)|flatten|"
             "dense(1024→128, relu)|dense(128→10)|" + std::to_string(cnn.param_count()));
}

// A flatten in a chain renames the buffer it is given: the chain passes x on and the
// gradient back, into dx where the flatten comes first, and the layer after it sees the same.
BOOST_AUTO_TEST_CASE(layer_chain_passes_buffers_through_a_flatten) {
  std::mt19937_64 rng(15);
  const Shape in{2, 3, 2};
  const int batch = 3;
  const std::vector<float> x = random_vector(batch * in.size(), rng), dy12 = random_vector(batch * in.size(), rng);
  std::vector<std::unique_ptr<Layer>> only;
  only.push_back(std::make_unique<Flatten>(in));
  LayerChain renaming(in, std::move(only));
  BOOST_TEST(renaming.forward(Backend::native, batch, x.data()) == x.data());
  std::vector<float> dx(x.size());
  renaming.backward(Backend::native, batch, x.data(), dy12.data(), dx.data());
  BOOST_TEST(dx == dy12);

  std::vector<float> params = random_vector(Dense(12, 5).param_count(), rng), grads(params.size()), alone_grads(params.size());
  std::vector<std::unique_ptr<Layer>> layers;
  layers.push_back(std::make_unique<Flatten>(in));
  layers.push_back(std::make_unique<Dense>(12, 5));
  LayerChain chain(in, std::move(layers));
  chain.bind(params.data(), grads.data());
  Dense alone(12, 5);
  alone.bind(params.data(), alone_grads.data());
  const std::vector<float> dy5 = random_vector(batch * 5, rng);
  std::vector<float> y(dy5.size()), alone_dx(x.size());
  const float* chain_y = chain.forward(Backend::native, batch, x.data());
  alone.forward(Backend::native, batch, x.data(), y.data());
  BOOST_TEST(std::vector<float>(chain_y, chain_y + y.size()) == y);
  chain.backward(Backend::native, batch, x.data(), dy5.data(), dx.data());
  alone.backward(Backend::native, batch, x.data(), y.data(), dy5.data(), alone_dx.data());
  BOOST_TEST(dx == alone_dx);
  BOOST_TEST(grads == alone_grads);
}

BOOST_AUTO_TEST_CASE(maxpool_relu_flatten_layers) {
  std::mt19937_64 rng(3);
  MaxPool2D pool(Shape{6, 6, 3}, 2, 2);
  check_layer(pool, 2, Backend::native, rng);
  MaxPool2D overlapping(Shape{5, 5, 2}, 3, 1);
  check_layer(overlapping, 2, Backend::native, rng);
  ReLU relu(Shape{1, 1, 20});
  check_layer(relu, 3, Backend::native, rng);
  Flatten flatten(Shape{3, 2, 4});
  check_layer(flatten, 2, Backend::native, rng);
}

BOOST_AUTO_TEST_CASE(groupnorm_and_global_average_pool) {
  std::mt19937_64 rng(8);
  GroupNorm two_groups(Shape{3, 4, 6}, 2);
  check_layer(two_groups, 3, Backend::native, rng);
  GroupNorm per_channel(Shape{2, 2, 4}, 4);  // instance norm: 4 values per group
  check_layer(per_channel, 2, Backend::native, rng);
  GroupNorm whole(Shape{1, 1, 10}, 1);  // layer norm of a dense output
  check_layer(whole, 4, Backend::native, rng);
  GroupNorm with_relu(Shape{3, 3, 8}, 4);  // the ReLU after it fused: masks its own gradient
  with_relu.set_relu_output(true);
  check_layer(with_relu, 3, Backend::native, rng);
  GlobalAvgPool gap(Shape{3, 5, 4});
  check_layer(gap, 2, Backend::native, rng);
  AvgPool2D avg(Shape{6, 6, 3}, 2, 2);
  check_layer(avg, 2, Backend::native, rng);
  AvgPool2D overlapping(Shape{5, 4, 2}, 3, 1);
  check_layer(overlapping, 2, Backend::native, rng);
  BOOST_CHECK_THROW(GroupNorm(Shape{2, 2, 6}, 4), std::invalid_argument);
}

// The input feeds both paths, so its gradient is their sum; with a projection shortcut the
// parameters of both paths get gradients.
BOOST_AUTO_TEST_CASE(residual_blocks) {
  std::mt19937_64 rng(9);
  for (Backend b : kBackends) {
    std::vector<std::unique_ptr<Layer>> body;
    body.push_back(std::make_unique<Conv2D>(Shape{5, 5, 4}, 4, 3, 1, 1, false));
    body.push_back(std::make_unique<GroupNorm>(Shape{5, 5, 4}, 2));
    Residual identity(LayerChain(Shape{5, 5, 4}, std::move(body)), LayerChain(Shape{5, 5, 4}, {}));
    check_layer(identity, 2, b, rng);
    identity.set_relu_output(true);  // the block's trailing ReLU fused into the sum
    check_layer(identity, 2, b, rng);

    std::vector<std::unique_ptr<Layer>> strided, projection;
    strided.push_back(std::make_unique<Conv2D>(Shape{6, 6, 2}, 4, 3, 2, 1, false));
    strided.push_back(std::make_unique<ReLU>(Shape{3, 3, 4}));
    projection.push_back(std::make_unique<Conv2D>(Shape{6, 6, 2}, 4, 1, 2, 0, false));
    projection.push_back(std::make_unique<GroupNorm>(Shape{3, 3, 4}, 2));
    Residual projected(LayerChain(Shape{6, 6, 2}, std::move(strided)), LayerChain(Shape{6, 6, 2}, std::move(projection)));
    check_layer(projected, 2, b, rng);
  }
}

// Training mode: a fixed key fixes the mask, so the layer is linear and its gradient exact;
// the kept fraction is 1 − rate, a new key draws a new mask, and evaluation passes x through.
BOOST_AUTO_TEST_CASE(dropout_layer) {
  std::mt19937_64 rng(10);
  Dropout train(Shape{1, 1, 40}, 0.3, 1);
  train.set_mode(true, 42);
  check_layer(train, 3, Backend::native, rng);

  const int n = 100000;
  std::vector<float> x(n, 1.f), a(n), b(n);
  Dropout layer(Shape{1, 1, n}, 0.25, 7);
  layer.set_mode(true, 1);
  layer.forward(Backend::native, 1, x.data(), a.data());
  long kept = 0;
  for (float v : a) {
    kept += v != 0.f;
    BOOST_TEST_REQUIRE((v == 0.f || std::fabs(v - 1.f / 0.75f) < 1e-6f));
  }
  BOOST_TEST(std::fabs(static_cast<double>(kept) / n - 0.75) < 0.01);
  layer.set_mode(true, 2);
  layer.forward(Backend::native, 1, x.data(), b.data());
  BOOST_TEST((a != b));
  layer.set_mode(true, 1);
  layer.forward(Backend::native, 1, x.data(), b.data());
  BOOST_TEST((a == b));  // the same key, the same mask
  layer.set_mode(false, 1);
  layer.forward(Backend::native, 1, x.data(), b.data());
  BOOST_TEST((b == x));
  BOOST_CHECK_THROW(Dropout(Shape{1, 1, 4}, 1.0, 0), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(losses) {
  std::mt19937_64 rng(4);
  const int batch = 6, classes = 5;
  std::vector<float> logits = random_vector(batch * classes, rng, 2.f), grad(logits.size());
  std::vector<int32_t> labels{0, 4, 2, 2, 1, 3};
  softmax_cross_entropy(batch, classes, logits.data(), labels.data(), grad.data());
  expect_gradient("softmax cross-entropy", logits, grad,
                  [&] { return softmax_cross_entropy(batch, classes, logits.data(), labels.data(), nullptr); });
  mse_onehot(batch, classes, logits.data(), labels.data(), grad.data());
  expect_gradient("mse", logits, grad, [&] { return mse_onehot(batch, classes, logits.data(), labels.data(), nullptr); });
}

BOOST_AUTO_TEST_CASE(softmax_cross_entropy_value) {
  const float logits[] = {0.f, 0.f, 0.f, 0.f};
  const int32_t label = 2;
  BOOST_TEST(softmax_cross_entropy(1, 4, logits, &label, nullptr) == std::log(4.0), boost::test_tools::tolerance(1e-9));
}

// Whole models exercise the ReLU fusion: the epilogue ReLU forward and the masked input
// gradients backward must give the same parameter gradients as separate ReLU layers.
BOOST_AUTO_TEST_CASE(models_with_fused_relus) {
  std::mt19937_64 rng(5);
  ModelSpec mlp{"mlp", {9, 6}, {1, 1, 11}, 4, {}};
  ModelSpec cnn{"cnn", {}, {16, 16, 1}, 3, {}};
  ModelSpec resnet{"resnet8", {}, {8, 8, 2}, 3, {}};
  for (const ModelSpec& spec : {mlp, cnn, resnet})
    for (Backend b : kBackends) {
      Model model(spec);
      model.init(11);
      const int batch = 3;
      std::vector<float> x = random_vector(static_cast<std::size_t>(batch * spec.input.size()), rng);
      std::vector<int32_t> labels{0, 2, 1};
      std::vector<float> dlogits(static_cast<std::size_t>(batch * spec.classes));
      auto loss = [&] {
        const float* logits = model.forward(b, batch, x.data());
        return softmax_cross_entropy(batch, spec.classes, logits, labels.data(), nullptr);
      };
      const float* logits = model.forward(b, batch, x.data());
      softmax_cross_entropy(batch, spec.classes, logits, labels.data(), dlogits.data());
      model.backward(b, batch, x.data(), dlogits.data());
      std::vector<float> params(model.params(), model.params() + model.param_count());
      const std::vector<float> grads(model.grads(), model.grads() + model.param_count());
      // The loss reads model.params(), so perturb there and mirror into `params`.
      auto through_model = [&] {
        std::copy(params.begin(), params.end(), model.params());
        return loss();
      };
      expect_gradient(spec.kind.c_str(), params, grads, through_model, 120);
    }
}

using starling::testing::supported_isas;

// The GPT's layers on sequences {1, T, C}: LayerNorm per token, exact GELU, the learned
// position embedding, each against finite differences (on every ISA path) and a
// double-precision forward.
BOOST_AUTO_TEST_CASE(layernorm_gelu_and_position_embedding) {
  std::mt19937_64 rng(21);
  LayerNorm norm(Shape{1, 5, 12});
  Gelu gelu(Shape{1, 4, 6});
  for (platform::Isa isa : supported_isas()) {
    platform::force_isa(isa);
    check_layer(norm, 3, Backend::native, rng);
    check_layer(gelu, 3, Backend::native, rng);
  }
  platform::force_isa(platform::detected_isa());
  PositionEmbedding position(5, 4);
  check_layer(position, 3, Backend::native, rng);

  // Forward values: LayerNorm normalises each token alone; GELU is x·Φ(x), not tanh's.
  const int tokens = 2 * 5, width = 12;
  std::vector<float> params = random_vector(norm.param_count(), rng), grads(norm.param_count());
  norm.bind(params.data(), grads.data());
  const std::vector<float> x = random_vector(static_cast<std::size_t>(tokens * width), rng, 3.f);
  std::vector<float> y(x.size());
  norm.forward(Backend::native, 2, x.data(), y.data());
  for (int t = 0; t < tokens; ++t) {
    double mean = 0.0, var = 0.0;
    for (int c = 0; c < width; ++c) mean += x[t * width + c];
    mean /= width;
    for (int c = 0; c < width; ++c) var += (x[t * width + c] - mean) * (x[t * width + c] - mean);
    var /= width;
    for (int c = 0; c < width; ++c) {
      const double want = (x[t * width + c] - mean) / std::sqrt(var + 1e-5) * params[c] + params[width + c];
      BOOST_TEST(std::fabs(y[t * width + c] - want) <= 1e-5 * (1 + std::fabs(want)));
    }
  }
  std::vector<float> g_in{-3.f, -1.f, -0.1f, 0.f, 0.5f, 1.f, 2.f, 4.f}, g_out(8);
  Gelu flat(Shape{1, 1, 8});
  flat.forward(Backend::native, 1, g_in.data(), g_out.data());
  for (int i = 0; i < 8; ++i) {
    const double v = g_in[i], want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    BOOST_TEST(std::fabs(g_out[i] - want) <= 1e-6 * (1 + std::fabs(want)));
  }
  BOOST_TEST(g_out[5] == 0.8413447f, boost::test_tools::tolerance(1e-6f));  // GELU(1) = Φ(1)
}

// Token ids gather rows; the backward scatter-adds, so a repeated id sums its gradients.
BOOST_AUTO_TEST_CASE(token_embedding_gathers_and_scatter_adds) {
  std::mt19937_64 rng(22);
  const int context = 5, vocab = 11, width = 4, batch = 3;
  TokenEmbedding embed(context, vocab, width);
  std::vector<float> params = random_vector(embed.param_count(), rng), grads(embed.param_count());
  embed.bind(params.data(), grads.data());
  std::vector<float> ids(batch * context);
  for (float& id : ids) id = static_cast<float>(rng() % 4);  // few ids: each repeats
  ids[0] = vocab - 1;
  const std::size_t out = static_cast<std::size_t>(batch * context * width);
  std::vector<float> y(out), r = random_vector(out, rng), dx(ids.size(), 1.f);
  auto loss = [&] {
    embed.forward(Backend::native, batch, ids.data(), y.data());
    return weighted_sum(y.data(), r);
  };
  loss();
  for (int t = 0; t < batch * context; ++t)
    for (int c = 0; c < width; ++c) BOOST_TEST(y[t * width + c] == params[static_cast<int>(ids[t]) * width + c]);
  embed.backward(Backend::native, batch, ids.data(), y.data(), r.data(), dx.data());
  const std::vector<float> dparams = grads;
  expect_gradient("token embedding", params, dparams, loss, 44);
  for (float d : dx) BOOST_TEST(d == 0.f);
  for (int row = 4; row < vocab - 1; ++row)  // rows no id names get no gradient
    for (int c = 0; c < width; ++c) BOOST_TEST(dparams[row * width + c] == 0.f);
  for (float bad : {-1.f, 1.5f, static_cast<float>(vocab)}) {
    ids[3] = bad;
    BOOST_CHECK_THROW(embed.forward(Backend::native, batch, ids.data(), y.data()), TokenError);
  }
  BOOST_CHECK_THROW(TokenEmbedding(0, vocab, width), std::invalid_argument);
  BOOST_TEST((embed.matrix_spans() == std::vector<ParamSpan>({{0, embed.param_count()}})));
}

namespace {

// Attention in double: per sample and head, softmax of the masked, scaled Q·Kᵀ, times V.
std::vector<double> reference_attention(const std::vector<float>& x, int batch, int t, int width, int heads) {
  const int d = width / heads, row = 3 * width;
  std::vector<double> y(static_cast<std::size_t>(batch) * t * width);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < t; ++i) {
        auto at = [&](int token, int part, int c) { return static_cast<double>(x[(b * t + token) * row + part * width + h * d + c]); };
        std::vector<double> p(static_cast<std::size_t>(i) + 1);
        double top = -1e300, sum = 0.0;
        for (int j = 0; j <= i; ++j) {
          double s = 0.0;
          for (int c = 0; c < d; ++c) s += at(i, 0, c) * at(j, 1, c);
          p[j] = s / std::sqrt(static_cast<double>(d));
          top = std::max(top, p[j]);
        }
        for (double& v : p) sum += (v = std::exp(v - top));
        for (int c = 0; c < d; ++c) {
          double o = 0.0;
          for (int j = 0; j <= i; ++j) o += p[j] / sum * at(j, 2, c);
          y[(b * t + i) * width + h * d + c] = o;
        }
      }
  return y;
}

}  // namespace

// Causal attention on every backend: finite differences, a double forward on ragged shapes,
// and causality (a later token's input leaves earlier outputs as they were).
BOOST_AUTO_TEST_CASE(causal_attention_and_token_dense) {
  std::mt19937_64 rng(23);
  for (platform::Isa isa : supported_isas()) {  // the causal softmax's ISA paths
    platform::force_isa(isa);
    CausalAttention small(5, 8, 2);
    check_layer(small, 2, Backend::native, rng);
  }
  CausalAttention split(34, 4, 2);  // from 32 tokens the products run in two blocks of rows
  check_layer(split, 1, Backend::native, rng);
  platform::force_isa(platform::detected_isa());
  for (Backend backend : kBackends) {
    CausalAttention small(5, 8, 2);
    check_layer(small, 2, backend, rng);
    TokenDense dense(5, 6, 9);
    check_layer(dense, 2, backend, rng);
    for (const auto [t, width, heads] :
         {std::array<int, 3>{7, 12, 3}, {1, 4, 1}, {13, 20, 5}, {17, 48, 4}, {32, 8, 2}, {45, 12, 3}, {64, 16, 2}}) {
      CausalAttention attention(t, width, heads);
      const int batch = 3;
      std::vector<float> x = random_vector(static_cast<std::size_t>(batch * t * 3 * width), rng);
      std::vector<float> y(static_cast<std::size_t>(batch * t * width));
      attention.forward(backend, batch, x.data(), y.data());
      const std::vector<double> want = reference_attention(x, batch, t, width, heads);
      for (std::size_t i = 0; i < y.size(); ++i) BOOST_TEST(std::fabs(y[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])));
      const std::vector<float> before = y;
      for (int c = 0; c < 3 * width; ++c) x[(t - 1) * 3 * width + c] += 1.f;  // sample 0's last token
      attention.forward(backend, batch, x.data(), y.data());
      for (int i = 0; i < (t - 1) * width; ++i) BOOST_TEST(y[i] == before[i]);
    }
  }
  BOOST_CHECK_THROW(CausalAttention(4, 10, 3), std::invalid_argument);
}

// The sequence loss is the mean over every position, in nats, with its gradient.
BOOST_AUTO_TEST_CASE(sequence_cross_entropy_over_the_vocabulary) {
  std::mt19937_64 rng(24);
  const int batch = 2, context = 3, vocab = 7;
  std::vector<float> logits = random_vector(static_cast<std::size_t>(batch * context * vocab), rng, 2.f);
  std::vector<int32_t> targets(static_cast<std::size_t>(batch * context));
  for (auto& t : targets) t = static_cast<int32_t>(rng() % vocab);
  std::vector<float> dlogits(logits.size());
  const double loss = sequence_cross_entropy(batch, context, vocab, logits.data(), targets.data(), dlogits.data());
  double want = 0.0;
  for (int r = 0; r < batch * context; ++r) {
    double top = -1e300, sum = 0.0;
    for (int v = 0; v < vocab; ++v) top = std::max(top, static_cast<double>(logits[r * vocab + v]));
    for (int v = 0; v < vocab; ++v) sum += std::exp(logits[r * vocab + v] - top);
    want += -(logits[r * vocab + targets[r]] - top - std::log(sum));
  }
  BOOST_TEST(loss == want / (batch * context), boost::test_tools::tolerance(1e-6));
  expect_gradient("sequence cross-entropy", logits, dlogits,
                  [&] { return sequence_cross_entropy(batch, context, vocab, logits.data(), targets.data(), nullptr); });
}

// The head tied to the token embedding: one slice of the arena, whose gradient is the
// head's and the embedding's summed (finite differences over the shared weights see both),
// and the position embedding's gradient checks the head's input gradient.
BOOST_AUTO_TEST_CASE(tied_head_shares_the_embedding_and_sums_its_gradients) {
  std::mt19937_64 rng(25);
  const int context = 4, vocab = 9, width = 6, batch = 2;
  for (Backend backend : kBackends) {
    std::vector<std::unique_ptr<Layer>> layers;
    auto embed = std::make_unique<TokenEmbedding>(context, vocab, width);
    TokenEmbedding& tied = *embed;
    layers.push_back(std::move(embed));
    layers.push_back(std::make_unique<PositionEmbedding>(context, width));
    layers.push_back(std::make_unique<TiedHead>(tied));
    LayerChain chain(Shape{1, context, 1}, std::move(layers));
    BOOST_TEST(chain.param_count() == padded_params(vocab * width) + padded_params(context * width));  // the head adds none
    std::vector<float> params = random_vector(chain.param_count(), rng), grads(chain.param_count(), 0.f);
    // Stale gradients in both slices (the padding stays zero, as in a model's arena): the
    // backward must overwrite them, not add to them.
    std::fill(grads.begin(), grads.begin() + vocab * width, 7.f);
    std::fill(grads.begin() + padded_params(vocab * width), grads.begin() + padded_params(vocab * width) + context * width, 7.f);
    chain.bind(params.data(), grads.data());
    chain.reserve(batch);
    std::vector<float> ids(batch * context);
    for (float& id : ids) id = static_cast<float>(rng() % vocab);
    const std::size_t out = static_cast<std::size_t>(batch * context * vocab);
    const std::vector<float> r = random_vector(out, rng);
    auto loss = [&] { return weighted_sum(chain.forward(backend, batch, ids.data()), r); };
    loss();
    chain.backward(backend, batch, ids.data(), r.data(), nullptr);
    const std::vector<float> dparams = grads;
    expect_gradient("tied weights and positions", params, dparams, loss, 80);
  }
}

// RMSNorm: finite differences, and a double forward (no mean subtracted, no shift).
BOOST_AUTO_TEST_CASE(rmsnorm_layer) {
  std::mt19937_64 rng(26);
  RmsNorm norm(Shape{1, 5, 12});
  check_layer(norm, 3, Backend::native, rng);
  const int tokens = 2 * 5, width = 12;
  std::vector<float> params = random_vector(norm.param_count(), rng), grads(norm.param_count());
  norm.bind(params.data(), grads.data());
  const std::vector<float> x = random_vector(static_cast<std::size_t>(tokens * width), rng, 3.f);
  std::vector<float> y(x.size());
  norm.forward(Backend::native, 2, x.data(), y.data());
  for (int t = 0; t < tokens; ++t) {
    double sum = 0.0;
    for (int c = 0; c < width; ++c) sum += static_cast<double>(x[t * width + c]) * x[t * width + c];
    for (int c = 0; c < width; ++c) {
      const double want = x[t * width + c] / std::sqrt(sum / width + 1e-5) * params[c];
      BOOST_TEST(std::fabs(y[t * width + c] - want) <= 1e-5 * (1 + std::fabs(want)));
    }
  }
}

// A nanoGPT block composed of the layers above, x + attn(ln1(x)) then x + mlp(ln2(x)), as a
// chain of two residual blocks on sequences: its parameter and input gradients against
// finite differences on both backends.
BOOST_AUTO_TEST_CASE(a_pre_layernorm_gpt_block) {
  std::mt19937_64 rng(27);
  const int context = 4, width = 8, heads = 2, batch = 2;
  const Shape seq{1, context, width};
  for (Backend backend : kBackends) {
    std::vector<std::unique_ptr<Layer>> attention, mlp, block;
    attention.push_back(std::make_unique<LayerNorm>(seq));
    attention.push_back(std::make_unique<TokenDense>(context, width, 3 * width));
    attention.push_back(std::make_unique<CausalAttention>(context, width, heads));
    attention.push_back(std::make_unique<TokenDense>(context, width, width));
    mlp.push_back(std::make_unique<LayerNorm>(seq));
    mlp.push_back(std::make_unique<TokenDense>(context, width, 4 * width));
    mlp.push_back(std::make_unique<Gelu>(Shape{1, context, 4 * width}));
    mlp.push_back(std::make_unique<TokenDense>(context, 4 * width, width));
    block.push_back(std::make_unique<Residual>(LayerChain(seq, std::move(attention)), LayerChain(seq, {})));
    block.push_back(std::make_unique<Residual>(LayerChain(seq, std::move(mlp)), LayerChain(seq, {})));
    LayerChain chain(seq, std::move(block));
    std::vector<float> params = random_vector(chain.param_count(), rng, 0.5f), grads(chain.param_count());
    chain.bind(params.data(), grads.data());
    chain.reserve(batch);
    std::vector<float> x = random_vector(static_cast<std::size_t>(batch * seq.size()), rng), dx(x.size());
    const std::vector<float> r = random_vector(x.size(), rng);
    auto loss = [&] { return weighted_sum(chain.forward(backend, batch, x.data()), r); };
    loss();
    chain.backward(backend, batch, x.data(), r.data(), dx.data());
    const std::vector<float> dparams = grads;
    expect_gradient("block input", x, dx, loss);
    expect_gradient("block parameters", params, dparams, loss, 80);
  }
}

// nanoGPT's CPU configuration (4 layers, 4 heads, width 128, context 64, 256 bytes):
// nanoGPT's parameter count, its decay groups and its initialisation.
BOOST_AUTO_TEST_CASE(gpt_has_nanogpts_parameters_and_initialisation) {
  const GptSpec spec;
  LayerChain gpt(Shape{1, spec.context, 1}, make_gpt(spec));
  BOOST_TEST((gpt.output_shape() == Shape{1, 64, 256}));
  // wte 256·128, wpe 64·128, per block 2·128 + (128·384 + 384) + (128·128 + 128) + 2·128 +
  // (128·512 + 512) + (512·128 + 128), ln_f 2·128; every count a multiple of 16 (no padding).
  BOOST_TEST(gpt.param_count() == 32768u + 8192u + 4u * 198272u + 256u);
  const std::vector<ParamSpan> spans = gpt.matrix_spans();
  BOOST_REQUIRE(spans.size() == 2u + 4u * 4u);
  std::size_t decayed = 0;
  for (const ParamSpan& s : spans) decayed += s.count;
  BOOST_TEST(decayed == 32768u + 8192u + 4u * (49152u + 16384u + 65536u + 65536u));

  std::vector<float> params(gpt.param_count()), grads(gpt.param_count());
  gpt.bind(params.data(), grads.data());
  std::mt19937_64 rng(1);
  gpt.init(rng);
  auto stddev = [&](const ParamSpan& s) {
    double sum = 0.0, sq = 0.0;
    for (std::size_t i = s.offset; i < s.offset + s.count; ++i) sum += params[i], sq += static_cast<double>(params[i]) * params[i];
    const double mean = sum / s.count;
    return std::sqrt(sq / s.count - mean * mean);
  };
  BOOST_TEST(stddev(spans[0]) == 0.02, boost::test_tools::tolerance(0.03));         // wte
  BOOST_TEST(stddev(spans[2]) == 0.02, boost::test_tools::tolerance(0.03));         // block 0's QKV
  BOOST_TEST(stddev(spans[3]) == 0.02 / std::sqrt(8.0), boost::test_tools::tolerance(0.03));  // its projection
  BOOST_TEST(stddev(spans[5]) == 0.02 / std::sqrt(8.0), boost::test_tools::tolerance(0.03));  // the MLP's
  for (std::size_t i = spans[2].offset + spans[2].count; i < spans[2].offset + spans[2].count + 384; ++i)
    BOOST_TEST(params[i] == 0.f);  // QKV biases
  const std::size_t block0 = spans[2].offset - 256;  // ln1: gamma 1, beta 0, before the QKV
  for (std::size_t i = block0; i < block0 + 128; ++i) BOOST_TEST(params[i] == 1.f);
  for (std::size_t i = block0 + 128; i < block0 + 256; ++i) BOOST_TEST(params[i] == 0.f);
  BOOST_CHECK_THROW(make_gpt(GptSpec{2, 3, 8, 4, 11}), std::invalid_argument);
}

// A small GPT end to end, token ids to the sequence cross-entropy, against finite differences.
BOOST_AUTO_TEST_CASE(gpt_gradient_end_to_end) {
  std::mt19937_64 rng(28);
  const GptSpec spec{2, 2, 8, 4, 11};
  const int batch = 2;
  for (Backend backend : kBackends) {
    LayerChain gpt(Shape{1, spec.context, 1}, make_gpt(spec));
    std::vector<float> params = random_vector(gpt.param_count(), rng, 0.3f), grads(gpt.param_count());
    gpt.bind(params.data(), grads.data());
    gpt.reserve(batch);
    std::vector<float> ids(batch * spec.context);
    std::vector<int32_t> targets(ids.size());
    for (float& id : ids) id = static_cast<float>(rng() % spec.vocab);
    for (int32_t& t : targets) t = static_cast<int32_t>(rng() % spec.vocab);
    std::vector<float> dlogits(ids.size() * spec.vocab);
    auto loss = [&] {
      return sequence_cross_entropy(batch, spec.context, spec.vocab, gpt.forward(backend, batch, ids.data()),
                                    targets.data(), nullptr);
    };
    sequence_cross_entropy(batch, spec.context, spec.vocab, gpt.forward(backend, batch, ids.data()), targets.data(),
                           dlogits.data());
    gpt.backward(backend, batch, ids.data(), dlogits.data(), nullptr);
    const std::vector<float> dparams = grads;
    expect_gradient("gpt", params, dparams, loss, 120);
  }
}
