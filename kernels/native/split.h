#pragma once
// Splitting one GEMM into independent sub-GEMMs over row or column ranges of C, for running
// them on several threads.
#include "kernels/gemm.h"

#include <vector>

namespace starling::kernels::native {

/// The GEMM restricted to rows [i0, i1) of C (all columns).
GemmArgs row_range(const GemmArgs& args, int i0, int i1);
/// The GEMM restricted to columns [j0, j1) of C (all rows).
GemmArgs col_range(const GemmArgs& args, int j0, int j1);

/// At most `parts` sub-GEMMs covering C, split along its longer side at multiples of
/// `align` (a micro-tile size) so no part ends in a ragged tile it need not have.
std::vector<GemmArgs> split(const GemmArgs& args, int parts, int align);

}  // namespace starling::kernels::native
