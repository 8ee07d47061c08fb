// The robust-aggregation loops built for scalar (robust_kernels_impl.h; flags in CMakeLists.txt).
#include "gossip/algorithms/robust_kernels_impl.h"

namespace starling::gossip {
extern const RobustKernels kRobustKernels_scalar;
const RobustKernels kRobustKernels_scalar = kThisIsaKernels;
}  // namespace starling::gossip
