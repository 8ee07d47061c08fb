// The robust-aggregation loops built for avx2 (robust_kernels_impl.h; flags in CMakeLists.txt).
#include "gossip/algorithms/robust_kernels_impl.h"

namespace starling::gossip {
extern const RobustKernels kRobustKernels_avx2;
const RobustKernels kRobustKernels_avx2 = kThisIsaKernels;
}  // namespace starling::gossip
