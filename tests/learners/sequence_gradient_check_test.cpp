// The GPT's layers and losses (LayerNorm, RMSNorm, GELU, the embeddings, causal attention,
// per-token dense, SwiGLU, the tied head, the sequence cross-entropy) and the whole GPT: analytic
// gradients against central finite differences in double precision, on every ISA path and
// kernel backend, and forwards against double-precision references.
#define BOOST_TEST_MODULE learners_sequence_gradients
#include <boost/test/unit_test.hpp>

#include "learners/layers/causal_attention.h"
#include "learners/layers/embedding.h"
#include "learners/layers/gelu.h"
#include "learners/layers/layer_norm.h"
#include "learners/layers/residual.h"
#include "learners/layers/rms_norm.h"
#include "learners/layers/tied_head.h"
#include "learners/layers/token_dense.h"
#include "learners/models/gpt.h"
#include "learners/models/layer_chain.h"
#include "learners/models/layer_factory.h"
#include "learners/models/model.h"
#include "learners/models/model_description.h"
#include "learners/tasks/loss.h"
#include "platform/cpu_features.h"
#include "tests/isa_paths.h"
#include "tests/learners/finite_differences.h"

#include <array>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace starling;
using namespace starling::testing;
using kernels::Backend;

namespace {

// A normalisation layer's forward on two samples of random tokens (`values` floats in all),
// with random parameters: what the double-precision forward checks compare.
struct NormForward {
  std::vector<float> params, grads, x, y;
};

NormForward forward_two_samples(Layer& norm, int values, std::mt19937_64& rng) {
  NormForward f;
  f.params = random_vector(norm.param_count(), rng);
  f.grads.resize(norm.param_count());
  norm.bind(f.params.data(), f.grads.data());
  f.x = random_vector(static_cast<std::size_t>(values), rng, 3.f);
  f.y.resize(f.x.size());
  norm.forward(Backend::native, 2, f.x.data(), f.y.data());
  return f;
}

// A chain whose output is as large as its input, checked whole through L = Σ y ⊙ r: its
// input gradient, and its parameters' at 80 coordinates, against finite differences.
void check_chain(LayerChain& chain, int batch, Backend backend, std::mt19937_64& rng, const std::string& what) {
  std::vector<float> params = random_vector(chain.param_count(), rng, 0.5f), grads(chain.param_count());
  chain.bind(params.data(), grads.data());
  chain.reserve(batch);
  std::vector<float> x = random_vector(static_cast<std::size_t>(batch * chain.input_shape().size()), rng), dx(x.size());
  const std::vector<float> r = random_vector(x.size(), rng);
  auto loss = [&] { return weighted_sum(chain.forward(backend, batch, x.data()), r); };
  loss();
  chain.backward(backend, batch, x.data(), r.data(), dx.data());
  const std::vector<float> dparams = grads;
  expect_gradient((what + " input").c_str(), x, dx, loss);
  expect_gradient((what + " parameters").c_str(), params, dparams, loss, 80);
}

}  // namespace

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
  const NormForward f = forward_two_samples(norm, tokens * width, rng);
  const std::vector<float>&params = f.params, &x = f.x, &y = f.y;
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
  for (platform::Isa isa : supported_isas()) {  // the fused attention's ISA paths
    platform::force_isa(isa);
    CausalAttention small(5, 8, 2);
    check_layer(small, 2, Backend::native, rng);
  }
  platform::force_isa(platform::detected_isa());
  for (Backend backend : kBackends) {
    CausalAttention small(5, 8, 2);
    check_layer(small, 2, backend, rng);
    CausalAttention split(34, 4, 2);  // past whole tiles of rows and whole vectors of keys
    check_layer(split, 1, backend, rng);
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

// The SwiGLU feed-forward as its row builds it (fused W1|W3, the gate, W2): the whole
// against finite differences on every backend, the gate's forward against silu(a)·b in
// double, its parameters as the row counts them, and its shape refused off a token sequence.
BOOST_AUTO_TEST_CASE(swiglu_feed_forward) {
  std::mt19937_64 rng(29);
  const int context = 5, width = 8, hidden = 6, batch = 2;
  const Shape seq{1, context, width};
  const std::vector<LayerDesc> desc = with_shapes({layer_of("swiglu").set("size", hidden)}, seq, 0);
  BOOST_TEST((desc[0].out == seq));
  for (Backend backend : kBackends) {
    LayerChain chain(seq, make_layers(desc));
    BOOST_TEST(chain.layers().size() == 3u);
    std::size_t trainable = 0;
    for (const auto& layer : chain.layers()) trainable += layer->param_count();
    BOOST_TEST(trainable == 3u * width * hidden + 2u * hidden + width);  // W1, W3, W2 and their biases
    check_chain(chain, batch, backend, rng, "swiglu");

    Layer& gate = *chain.layers()[1];
    check_layer(gate, 3, backend, rng);
    std::vector<float> ab = random_vector(static_cast<std::size_t>(batch * context * 2 * hidden), rng, 3.f);
    std::vector<float> y(static_cast<std::size_t>(batch * context * hidden));
    gate.forward(backend, batch, ab.data(), y.data());
    for (int t = 0; t < batch * context; ++t)
      for (int j = 0; j < hidden; ++j) {
        const double a = ab[t * 2 * hidden + j], b = ab[t * 2 * hidden + hidden + j];
        const double want = a / (1.0 + std::exp(-a)) * b;
        BOOST_TEST(std::fabs(y[t * hidden + j] - want) <= 1e-5 * (1 + std::fabs(want)));
      }
  }
  BOOST_CHECK_THROW(with_shapes({layer_of("swiglu").set("size", hidden)}, Shape{4, 4, 3}, 0), ModelError);
  try {
    with_shapes({layer_of("swiglu")}, seq, 0);
    BOOST_FAIL("a swiglu without a size was described");
  } catch (const ModelError& e) {
    BOOST_TEST(e.key() == "size");
  }
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
  const NormForward f = forward_two_samples(norm, tokens * width, rng);
  const std::vector<float>&params = f.params, &x = f.x, &y = f.y;
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
    check_chain(chain, batch, backend, rng, "block");
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

// A small GPT end to end, token ids to the sequence cross-entropy, against finite
// differences, with each of its MLPs (model.mlp).
BOOST_AUTO_TEST_CASE(gpt_gradient_end_to_end) {
  std::mt19937_64 rng(28);
  const int batch = 2;
  for (const char* mlp : kGptMlps)
  for (Backend backend : kBackends) {
    const GptSpec spec{2, 2, 8, 4, 11, mlp};
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
    expect_gradient(mlp, params, dparams, loss, 120);
  }
}

// model.mlp = "swiglu": each block's MLP is x + swiglu(ln2(x)) with 8/3 · width hidden units
// (a multiple of 8), its W2 scaled as nanoGPT's output projections are.
BOOST_AUTO_TEST_CASE(gpt_with_a_swiglu_mlp) {
  BOOST_TEST(gpt_swiglu_hidden(128) == 344);
  BOOST_TEST(gpt_swiglu_hidden(384) == 1024);
  const GptSpec spec{2, 2, 32, 4, 11, "swiglu"};  // every layer's parameters a whole number of 64 bytes
  const std::vector<LayerDesc> layers = with_shapes(gpt_description(spec), Shape{1, spec.context, 1}, spec.vocab);
  const LayerDesc& mlp = layers[3].body[1];
  BOOST_TEST(mlp.kind() == "swiglu");
  BOOST_TEST(mlp.integer("size") == 88);
  BOOST_TEST(mlp.single("projection_std") == kGptInitStd / std::sqrt(4.f));
  ModelSpec model;
  model.kind = "gpt", model.blocks = 2, model.heads = 2, model.width = 32, model.context = 4, model.mlp = "swiglu";
  model.input = Shape{1, 4, 1}, model.classes = 11;
  const std::size_t trainable = Model(model).trainable_count();
  const std::size_t w = 32, h = 88, block = 4 * w * w + 4 * w + 4 * w + 3 * w * h + 2 * h + w;
  BOOST_TEST(trainable == 11 * w + 4 * w + 2 * block + 2 * w);  // embeddings, blocks, final LayerNorm
  GptSpec unknown = spec;
  unknown.mlp = "relu";
  BOOST_CHECK_THROW(gpt_description(unknown), std::invalid_argument);
}
