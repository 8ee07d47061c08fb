#pragma once
// The non-GEMM kernels of a transformer's step, on rows of contiguous floats: exact GELU,
// the causal softmax of attention scores, LayerNorm and the softmax cross-entropy over a
// vocabulary. Each is vectorized per instruction set and dispatched like ops.h
// (STARLING_ISA, force_isa); none allocates.
#include <cstdint>

namespace starling::kernels {

/// y = x·Φ(x), Φ the standard normal CDF (exact GELU, not the tanh approximation); y may be
/// x. Unless null, slope = Φ(x) + x·φ(x), the derivative, for a backward pass that then
/// needs only dy·slope (slope must not alias x or y).
void gelu_forward(long n, const float* x, float* y, float* slope = nullptr);
/// dx = dy·(Φ(x) + x·φ(x)); dx may be dy.
void gelu_backward(long n, const float* x, const float* dy, float* dx);

/// In place on `count` score matrices of t × t (row stride t): row i becomes
/// softmax_j≤i(scale·s_ij), and its entries beyond i zero.
void causal_softmax_forward(long count, int t, float scale, float* s);
/// In place on `count` t × t matrices: d holds dP on entry (read only at j ≤ i) and leaves
/// as dS_ij = scale·P_ij·(dP_ij − Σ_k P_ik·dP_ik), zero beyond i, from P as the forward
/// leaves it (zero beyond i).
void causal_softmax_backward(long count, int t, float scale, const float* p, float* d);

constexpr float kLayerNormEpsilon = 1e-5f;
/// Each of `rows` rows of c floats: y = (x − mean)·rstd·gamma + beta, rstd = 1/√(var + ε)
/// (the biased variance, as nn.LayerNorm); writes mean[rows] and rstd[rows].
void layernorm_forward(long rows, int c, const float* x, const float* gamma, const float* beta, float* y, float* mean,
                       float* rstd);
/// Overwrites dgamma[c], dbeta[c] and, unless null, dx, from the forward's x, mean and rstd:
/// with x̂ = (x − mean)·rstd and g = gamma·dy, dx = rstd·(g − mean(g) − x̂·mean(g·x̂)).
void layernorm_backward(long rows, int c, const float* x, const float* dy, const float* gamma, const float* mean,
                        const float* rstd, float* dgamma, float* dbeta, float* dx);

/// Mean softmax cross-entropy, in nats, of logits[rows × vocab] against targets[rows];
/// writes dlogits = (softmax − onehot)/rows unless null. A target outside [0, vocab) is the
/// caller's bug and counts as 0.
double vocab_cross_entropy(long rows, int vocab, const float* logits, const int32_t* targets, float* dlogits);

}  // namespace starling::kernels
