#pragma once
// The causal attention core of one sample's one head, fused: the four products, the causal
// softmax between them, and no GEMM calls, packing or transposes beyond one copy of K or V
// at a time (Kᵀ or Vᵀ for the scores, V made contiguous for P·V). Heads are small (t × t scores, d of 16–128), where a general GEMM call's
// fixed costs outweigh its work; these passes run register-blocked products over the
// operands in place instead. Dispatched per ISA like sequence_ops.h; none allocates.
namespace starling::kernels {

/// Where one sample's one head lives: q, k and v are t rows of d floats, each row `ld`
/// floats after the last (rows of a fused [q | k | v] projection); the output and its
/// gradient are t rows `ld_out` apart. scale multiplies the scores (1/√d).
struct AttentionHead {
  int t = 0, d = 0;
  float scale = 1.f;
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  long ld = 0, ld_out = 0;
};

/// p (t × t, row stride t) ← causal softmax(scale·Q·Kᵀ), zero beyond the diagonal;
/// out ← P·V. scratch holds d·t floats.
void attention_forward(const AttentionHead& head, float* p, float* out, float* scratch);

/// From the forward's P and dO (`d_out`, rows ld_out apart), overwrites dQ, dK and dV (rows ld
/// apart, laid out as q, k and v). ds (t × t) and scratch (d·t floats) are workspace.
void attention_backward(const AttentionHead& head, const float* p, const float* d_out, float* dq, float* dk,
                        float* dv, float* ds, float* scratch);

}  // namespace starling::kernels
