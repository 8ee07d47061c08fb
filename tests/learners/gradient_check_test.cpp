// Every image layer's and both losses' analytic gradients against central finite
// differences in double precision, on both kernel backends; and whole models (with fused
// ReLUs and pools, and the residual network) likewise. The sequence layers' are in
// sequence_gradient_check_test.cpp.
#define BOOST_TEST_MODULE learners_gradients
#include <boost/test/unit_test.hpp>

#include "learners/layers/conv2d.h"
#include "learners/layers/dense.h"
#include "learners/layers/dropout.h"
#include "learners/layers/elementwise.h"
#include "learners/layers/group_norm.h"
#include "learners/layers/pooling.h"
#include "learners/layers/residual.h"
#include "learners/models/layer_chain.h"
#include "learners/models/model.h"
#include "learners/tasks/loss.h"
#include "platform/cpu_features.h"
#include "tests/learners/finite_differences.h"

#include <cmath>
#include <memory>
#include <random>
#include <vector>

using namespace starling;
using namespace starling::testing;
using kernels::Backend;

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
