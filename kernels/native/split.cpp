// Row / column range views of a GEMM and the partition used for multi-threaded calls.
#include "kernels/native/split.h"

#include <algorithm>

namespace starling::kernels::native {

GemmArgs row_range(const GemmArgs& g, int i0, int i1) {
  GemmArgs s = g;
  s.m = i1 - i0;
  s.a = g.trans_a ? g.a + i0 : g.a + static_cast<long>(i0) * g.lda;
  s.c = g.c + static_cast<long>(i0) * g.ldc;
  if (g.velocity) s.velocity = g.velocity + static_cast<long>(i0) * g.ldc;
  if (g.relu_mask) s.relu_mask = g.relu_mask + static_cast<long>(i0) * g.ldmask;
  return s;
}

GemmArgs col_range(const GemmArgs& g, int j0, int j1) {
  GemmArgs s = g;
  s.n = j1 - j0;
  s.b = g.trans_b ? g.b + static_cast<long>(j0) * g.ldb : g.b + j0;
  s.c = g.c + j0;
  if (g.velocity) s.velocity = g.velocity + j0;
  if (g.bias) s.bias = g.bias + j0;
  if (g.relu_mask) s.relu_mask = g.relu_mask + j0;
  return s;
}

std::vector<GemmArgs> split(const GemmArgs& g, int parts, int align) {
  const bool by_rows = g.m >= g.n;
  const int extent = by_rows ? g.m : g.n;
  const int units = (extent + align - 1) / align;
  parts = std::clamp(parts, 1, std::max(1, units));
  std::vector<GemmArgs> out;
  out.reserve(parts);
  for (int p = 0; p < parts; ++p) {
    const int lo = std::min(extent, units * p / parts * align);
    const int hi = std::min(extent, units * (p + 1) / parts * align);
    if (hi <= lo) continue;
    out.push_back(by_rows ? row_range(g, lo, hi) : col_range(g, lo, hi));
  }
  return out;
}

}  // namespace starling::kernels::native
