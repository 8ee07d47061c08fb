// Portable micro-kernel of the native GEMM (MR=4 × NR=8, plain C++; the compiler may use
// the baseline SSE2 it is allowed). The fallback for CPUs without AVX2/FMA and the path
// STARLING_ISA=scalar forces.
#include "kernels/native/driver.h"
#include "kernels/native/isa_gemm.h"

namespace starling::kernels::native {
namespace {

constexpr int kMR = 4;
constexpr int kNR = 8;

inline float finish(float v, const TileArgs& t, const float* c, int col, int row) {
  if (t.load_c) v += *c;
  if (t.bias) v += t.bias[col];
  if (t.relu) v = v > 0.f ? v : 0.f;
  if (t.mask) v = t.mask[row * t.ldmask + col] > 0.f ? v : 0.f;
  return v;
}

template <int MR>
void tile_impl(const TileArgs& t) {
  float acc[MR][kNR] = {};
  float bv[kNR] = {};
  const float* a = t.a;
  const float* b = t.b;
  for (int p = 0; p < t.kc; ++p) {
    // Columns past nr stay zero so an in-place B is never read past its row.
    for (int j = 0; j < t.nr; ++j) bv[j] = b[j];
    for (int i = 0; i < MR; ++i) {
      const float ai = a[i * t.a_rs];
      for (int j = 0; j < kNR; ++j) acc[i][j] += ai * bv[j];
    }
    a += t.a_cs;
    b += t.b_rs;
  }
  for (int i = 0; i < MR; ++i) {
    float* c = t.c + i * t.ldc;
    for (int j = 0; j < t.nr; ++j) c[j] = finish(acc[i][j], t, c + j, j, i);
  }
}

template <int MR>
void pick_rows(const TileArgs& t) {
  if constexpr (MR > 1) {
    if (t.mr < MR) return pick_rows<MR - 1>(t);
  }
  tile_impl<MR>(t);
}

struct ScalarKernel {
  static constexpr int MR = kMR;
  static constexpr int NR = kNR;
  static void tile(const TileArgs& t) { pick_rows<kMR>(t); }
};

}  // namespace

void gemm_scalar(const GemmArgs& args) {
  static const Blocking blocking = make_blocking(kMR, kNR);
  run_gemm<ScalarKernel>(args, blocking);
}

}  // namespace starling::kernels::native
