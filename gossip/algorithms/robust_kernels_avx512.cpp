// The robust-aggregation loops built for avx512 (robust_kernels_impl.h; flags in CMakeLists.txt).
#include "gossip/algorithms/robust_kernels_impl.h"

namespace starling::gossip {
extern const RobustKernels kRobustKernels_avx512;
const RobustKernels kRobustKernels_avx512 = kThisIsaKernels;
}  // namespace starling::gossip
