// The fused attention core (attention.h): the baseline build of its passes and the per-call
// dispatch among the ISA builds.
#include "kernels/attention.h"

#include "kernels/attention_impl.h"
#include "platform/isa_dispatch.h"

namespace starling::kernels {

namespace attention_detail {
constexpr AttentionTable kAttentionBaseline = make_attention_table();
}  // namespace attention_detail

namespace {

constexpr platform::IsaDispatch<const attention_detail::AttentionTable*> kAttention{
    &attention_detail::kAttentionBaseline, STARLING_X86_64_ONLY(&attention_detail::kAttentionAvx2),
    STARLING_X86_64_ONLY(&attention_detail::kAttentionAvx512)};

}  // namespace

void attention_forward(const AttentionHead& head, float* p, float* out, float* scratch) {
  kAttention.get()->forward(head, p, out, scratch);
}

void attention_backward(const AttentionHead& head, const float* p, const float* d_out, float* dq, float* dk,
                        float* dv, float* ds, float* scratch) {
  kAttention.get()->backward(head, p, d_out, dq, dk, dv, ds, scratch);
}

}  // namespace starling::kernels
