// AVX-512 build of the fused attention passes (attention_impl.h), compiled with AVX-512 F/BW/DQ/VL.
#include "kernels/attention_impl.h"

namespace starling::kernels::attention_detail {

constexpr AttentionTable kAttentionAvx512 = make_attention_table();

}  // namespace starling::kernels::attention_detail
