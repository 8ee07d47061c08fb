#pragma once
// The vector loops of robust aggregation (robust_aggregation.h): squared distances,
// scaled differences and the coordinate-wise trimmed mean. Written once as plain loops over
// fixed-width lane arrays (robust_kernels_impl.h) that the compiler vectorizes, compiled per
// ISA (robust_kernels_{scalar,avx2,avx512}.cpp) and chosen at run time by
// platform::IsaDispatch, so STARLING_ISA and force_isa reach them as they reach the codecs'.
#include <cstddef>

namespace starling::gossip {

struct RobustKernels {
  /// Σ_i (a_i − b_i)², float lanes summed in double every block (relative error ≈ 1e-6).
  double (*squared_distance)(const float* a, const float* b, std::size_t n);
  /// x_i += w · (y_i − base_i).
  void (*add_scaled_difference)(float* x, const float* y, const float* base, float w, std::size_t n);
  /// out_i = the mean of rows[0..count)[i] after dropping the `trim` smallest and the `trim`
  /// largest (2·trim < count); out may be one of the rows.
  void (*trimmed_mean)(const float* const* rows, std::size_t count, std::size_t trim, float* out, std::size_t n);
};

/// The table for the active ISA.
const RobustKernels& robust_kernels();

}  // namespace starling::gossip
