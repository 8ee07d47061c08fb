#pragma once
// What the blocked driver hands a micro-kernel for one MR×NR tile of C: where the A sliver
// and B panel are (packed or read in place), and the fused epilogue for the last K block.
#include "kernels/sgd_args.h"

namespace starling::kernels::native {

struct TileArgs {
  int kc = 0;          // depth of this block
  int mr = 0, nr = 0;  // valid rows / columns of the tile (≤ the kernel's MR / NR)
  // op(A)(i, p) of the sliver is a[i*a_rs + p*a_cs]: (1, MR) packed, (1, lda) transposed in
  // place, (lda, 1) untransposed in place.
  const float* a = nullptr;
  long a_rs = 0, a_cs = 0;
  // Row p of the B panel starts at b + p*b_rs and holds nr contiguous floats.
  const float* b = nullptr;
  long b_rs = 0;
  bool stream_b = false;  // B read in place, from wherever it lies: worth prefetching ahead
  float* c = nullptr;
  long ldc = 0;
  bool load_c = false;          // add to C (accumulate, or any K block after the first)
  const float* bias = nullptr;  // non-null only on the last K block
  bool relu = false;            // only on the last K block
  const float* mask = nullptr;  // non-null only on the last K block
  long ldmask = 0;
  float* velocity = nullptr;    // the SGD epilogue (laid out like C); only on the last K block
  SgdArgs sgd;
};

}  // namespace starling::kernels::native
