// The sequence kernels (sequence_ops.h): the baseline build of their bodies and the
// per-call dispatch among the ISA builds.
#include "kernels/sequence_ops.h"

#include "kernels/sequence_ops_impl.h"
#include "platform/isa_dispatch.h"

namespace starling::kernels {

namespace sequence_detail {
constexpr SequenceTable kSequenceBaseline = make_sequence_table();
}  // namespace sequence_detail

namespace {

constexpr platform::IsaDispatch<const sequence_detail::SequenceTable*> kSequence{
    &sequence_detail::kSequenceBaseline, STARLING_X86_64_ONLY(&sequence_detail::kSequenceAvx2),
    STARLING_X86_64_ONLY(&sequence_detail::kSequenceAvx512)};

const sequence_detail::SequenceTable& table() { return *kSequence.get(); }

}  // namespace

void gelu_forward(long n, const float* x, float* y, float* slope) { table().gelu_forward(n, x, y, slope); }

void gelu_backward(long n, const float* x, const float* dy, float* dx) { table().gelu_backward(n, x, dy, dx); }

void causal_softmax_forward(long count, int t, float scale, float* s) {
  table().causal_softmax_forward(count, t, scale, s);
}

void causal_softmax_backward(long count, int t, float scale, const float* p, float* d) {
  table().causal_softmax_backward(count, t, scale, p, d);
}

void layernorm_forward(long rows, int c, const float* x, const float* gamma, const float* beta, float* y, float* mean,
                       float* rstd) {
  table().layernorm_forward(rows, c, x, gamma, beta, y, mean, rstd);
}

void layernorm_backward(long rows, int c, const float* x, const float* dy, const float* gamma, const float* mean,
                        const float* rstd, float* dgamma, float* dbeta, float* dx) {
  table().layernorm_backward(rows, c, x, dy, gamma, mean, rstd, dgamma, dbeta, dx);
}

double vocab_cross_entropy(long rows, int vocab, const float* logits, const int32_t* targets, float* dlogits) {
  return table().vocab_cross_entropy(rows, vocab, logits, targets, dlogits);
}

}  // namespace starling::kernels
