// Run-time choice of the codec kernel table (protocols/simd/codec_kernels.h).
#include "platform/isa_dispatch.h"
#include "protocols/simd/scalar_kernels.h"

namespace starling::protocols::simd {

extern const CodecKernels kAvx2Kernels;
extern const CodecKernels kAvx512Kernels;
extern const CodecKernels kNeonKernels;

namespace {

namespace s = scalar;

constexpr CodecKernels kScalarKernels = {
    s::f32_encode,       s::fp16_encode,   s::bf16_encode,  s::f32_finite,    s::fp16_finite,
    s::bf16_finite,      s::f32_decode,    s::fp16_decode,  s::bf16_decode,   s::threshold_sparse,
    s::threshold_bitmap, s::bitmap_check,  s::bitmap_decode, s::select_abs_ge, s::add_absmax,
    s::qsgd_quantize,    s::qsgd_valid,    s::qsgd_dequant, s::add_abssum,    s::sign_encode,
    s::sign_decode,
};

constexpr platform::IsaDispatch<const CodecKernels*> kKernels{&kScalarKernels, STARLING_X86_64_ONLY(&kAvx2Kernels),
                                                              STARLING_X86_64_ONLY(&kAvx512Kernels),
                                                              STARLING_ARM64_ONLY(&kNeonKernels)};

}  // namespace

const CodecKernels& codec_kernels() { return *kKernels.get(); }

}  // namespace starling::protocols::simd
