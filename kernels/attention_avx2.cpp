// AVX2 build of the fused attention passes (attention_impl.h), compiled with -mavx2 -mfma.
#include "kernels/attention_impl.h"

namespace starling::kernels::attention_detail {

constexpr AttentionTable kAttentionAvx2 = make_attention_table();

}  // namespace starling::kernels::attention_detail
