// Run-time choice of the robust-aggregation loops (gossip/algorithms/robust_kernels.h).
#include "gossip/algorithms/robust_kernels.h"

#include "platform/isa_dispatch.h"

namespace starling::gossip {

extern const RobustKernels kRobustKernels_scalar;
#if defined(__x86_64__)
extern const RobustKernels kRobustKernels_avx2;
extern const RobustKernels kRobustKernels_avx512;
#endif

namespace {
#if defined(__x86_64__)
const platform::IsaDispatch<const RobustKernels*> kKernels{&kRobustKernels_scalar, &kRobustKernels_avx2,
                                                           &kRobustKernels_avx512};
#else
const platform::IsaDispatch<const RobustKernels*> kKernels{&kRobustKernels_scalar, nullptr, nullptr};
#endif
}  // namespace

const RobustKernels& robust_kernels() { return *kKernels.get(); }

}  // namespace starling::gossip
