// Run-time choice of the codec kernel table (protocols/simd/codec_kernels.h).
#include "protocols/simd/scalar_kernels.h"

namespace starling::protocols::simd {

#if defined(__x86_64__)
extern const CodecKernels kAvx2Kernels;
extern const CodecKernels kAvx512Kernels;
#endif

namespace {

namespace s = scalar;

const CodecKernels kScalarKernels = {
    s::f32_encode,       s::fp16_encode,   s::bf16_encode,  s::f32_finite,    s::fp16_finite,
    s::bf16_finite,      s::f32_decode,    s::fp16_decode,  s::bf16_decode,   s::threshold_sparse,
    s::threshold_bitmap, s::bitmap_check,  s::bitmap_decode, s::select_abs_ge, s::add_absmax,
    s::qsgd_quantize,    s::qsgd_valid,    s::qsgd_dequant, s::add_abssum,    s::sign_encode,
    s::sign_decode,
};

}  // namespace

const CodecKernels& codec_kernels(platform::Isa isa) {
#if defined(__x86_64__)
  const platform::Isa best = platform::detected_isa();
  if (static_cast<int>(isa) > static_cast<int>(best)) isa = best;
  if (isa == platform::Isa::avx512) return kAvx512Kernels;
  if (isa == platform::Isa::avx2) return kAvx2Kernels;
#else
  (void)isa;
#endif
  return kScalarKernels;
}

const CodecKernels& codec_kernels() { return codec_kernels(platform::active_isa()); }

}  // namespace starling::protocols::simd
