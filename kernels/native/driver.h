#pragma once
// The blocked GEMM loop nest and operand packing, written once and compiled into each ISA
// file with that file's micro-kernel, so the packing loops get the same vector flags.
//
// Internal linkage on purpose: the same template compiled with -mavx512f in one file and
// without it in another must never be merged by the linker (that would run AVX-512 code on
// a CPU without it). Hence the unnamed namespace in a header.
//
// Loop order (C is row-major and the micro-kernel broadcasts A and vector-loads B rows):
//   i0 over M by mc  → p0 over K by kc  [pack A block, mc×kc]
//     → j0 over N by nc  [pack B block, kc×nc, lives in L2]
//       → ir over mc by MR (an MR×kc A sliver stays in L1)  → jr over nc by NR: tile.
#include "kernels/gemm.h"
#include "kernels/native/blocking.h"
#include "kernels/native/pack_buffer.h"
#include "kernels/native/tile.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace starling::kernels::native {
namespace {

// Kernels may bring a vector transpose for packing untransposed A, two slivers at a time:
// static pack_a_rows(src, lda, kc, rows, sliver) for rows ≤ 2·MR writes, for p < kc,
// sliver[p*MR + i] = src[i*lda + p] (i < MR) and sliver[MR*kc + p*MR + i − MR] (i ≥ MR).
template <class Kernel, class = void>
struct has_pack_a_rows : std::false_type {};
template <class Kernel>
struct has_pack_a_rows<Kernel, std::void_t<decltype(&Kernel::pack_a_rows)>> : std::true_type {};

// Rows [0, kc) of a row-major block `width` floats wide (row stride ld) into W-wide panels:
// panel s starts at dst + s*W*kc and holds, for each row p, its W floats side by side (the
// last panel may be narrower and keeps the stride W). The block is walked a group of panels
// at a time, G floats of each row (whole cache lines: 16 floats or more), down all rows:
// each source line is read once, whole (panel by panel, a block just written elsewhere was
// read a line per row twice over), and each row writes into G / W panels only (row by row,
// into all of them: mc / 8 panels 4 KiB-multiples apart that evict one another in L1).
// memcpy, not std::copy_n: a memmove of W floats is a library call per panel row, where a
// memcpy of a constant size is a few vector moves.
template <int W>
void pack_panels(const float* src, long ld, int kc, int width, float* dst) {
  constexpr int G = W % 16 == 0 ? W : W % 8 == 0 ? 2 * W : W % 4 == 0 ? 4 * W : W % 2 == 0 ? 8 * W : 16 * W;
  int j0 = 0;
  for (; j0 + G <= width; j0 += G) {
    const float* row = src + j0;
    for (int p = 0; p < kc; ++p, row += ld)
      for (int j = 0; j < G; j += W) std::memcpy(dst + static_cast<long>(j0 + j) * kc + p * W, row + j, W * sizeof(float));
  }
  if (j0 == width) return;
  const float* row = src + j0;
  for (int p = 0; p < kc; ++p, row += ld) {
    int j = j0;
    for (; j + W <= width; j += W) std::memcpy(dst + static_cast<long>(j) * kc + p * W, row + j - j0, W * sizeof(float));
    if (j < width) std::memcpy(dst + static_cast<long>(j) * kc + p * W, row + j - j0, (width - j) * sizeof(float));
  }
}

// Rows [i0, i0+mc) × depth [p0, p0+kc) of op(A) into MR-row slivers; sliver s starts at
// dst + s*MR*kc and stores, for each p, its MR rows next to each other.
template <class Kernel>
void pack_a(const GemmArgs& g, int i0, int mc, int p0, int kc, float* dst) {
  constexpr int MR = Kernel::MR;
  if (g.trans_a) return pack_panels<MR>(g.a + static_cast<long>(p0) * g.lda + i0, g.lda, kc, mc, dst);
  for (int ir = 0; ir < mc; ir += MR) {
    const int mr = std::min(MR, mc - ir);
    float* sliver = dst + static_cast<long>(ir) * kc;
    if constexpr (has_pack_a_rows<Kernel>::value) {
      const int rows = std::min(2 * MR, mc - ir);
      Kernel::pack_a_rows(g.a + static_cast<long>(i0 + ir) * g.lda + p0, g.lda, kc, rows, sliver);
      ir += rows > MR ? MR : 0;  // the second sliver is packed too
    } else {
      // Reading MR rows side by side keeps the writes contiguous.
      const float* src = g.a + static_cast<long>(i0 + ir) * g.lda + p0;
      for (int p = 0; p < kc; ++p)
        for (int i = 0; i < mr; ++i) sliver[p * MR + i] = src[static_cast<long>(i) * g.lda + p];
    }
  }
}

// Kernels may bring a vector transpose for packing Bᵀ panels: static pack_bt(src, ldb, kc,
// nr, panel) writing panel[p*NR + j] = src[j*ldb + p] for p < kc, j < nr.
template <class Kernel, class = void>
struct has_pack_bt : std::false_type {};
template <class Kernel>
struct has_pack_bt<Kernel, std::void_t<decltype(&Kernel::pack_bt)>> : std::true_type {};

// Depth [p0, p0+kc) × columns [j0, j0+nc) of op(B) into NR-column panels; panel s starts at
// dst + s*NR*kc with row stride NR. The last panel may be narrower; kernels mask it.
template <class Kernel>
void pack_b(const GemmArgs& g, int p0, int kc, int j0, int nc, float* dst) {
  constexpr int NR = Kernel::NR;
  if (!g.trans_b) return pack_panels<NR>(g.b + static_cast<long>(p0) * g.ldb + j0, g.ldb, kc, nc, dst);
  for (int jr = 0; jr < nc; jr += NR) {
    const int nr = std::min(NR, nc - jr);
    float* panel = dst + static_cast<long>(jr) * kc;
    if constexpr (has_pack_bt<Kernel>::value) {
      Kernel::pack_bt(g.b + static_cast<long>(j0 + jr) * g.ldb + p0, g.ldb, kc, nr, panel);
    } else {
      const float* src = g.b + static_cast<long>(j0 + jr) * g.ldb + p0;
      for (int p = 0; p < kc; ++p)
        for (int j = 0; j < nr; ++j) panel[p * NR + j] = src[static_cast<long>(j) * g.ldb + p];
    }
  }
}

// Kernels may bring a loop over whole tiles along a row: static row(t, tiles, b_step) runs
// `tiles` full MR×NR tiles starting at t, each next one NR columns on and b_step into B.
template <class Kernel, class = void>
struct has_row : std::false_type {};
template <class Kernel>
struct has_row<Kernel, std::void_t<decltype(&Kernel::row)>> : std::true_type {};

// And a loop down a column: static column(t, tiles, a_step) runs `tiles` full-height tiles
// of width t.nr ≤ NR starting at t, each next one MR rows on and a_step into A.
template <class Kernel, class = void>
struct has_column : std::false_type {};
template <class Kernel>
struct has_column<Kernel, std::void_t<decltype(&Kernel::column)>> : std::true_type {};

// Where the driver finds the current A and B blocks: packed scratch or the caller's memory.
struct Operands {
  const float* a_packed = nullptr;  // null: read op(A) in place
  const float* b_packed = nullptr;  // null: read B in place (never for trans_b)
};

template <class Kernel>
void set_a(const GemmArgs& g, const Operands& ops, int i, int p0, int kc, TileArgs& t) {
  if (ops.a_packed) {
    t.a = ops.a_packed + static_cast<long>(i) * kc;
    t.a_rs = 1;
    t.a_cs = Kernel::MR;
  } else if (g.trans_a) {
    t.a = g.a + static_cast<long>(p0) * g.lda + i;
    t.a_rs = 1;
    t.a_cs = g.lda;
  } else {
    t.a = g.a + static_cast<long>(i) * g.lda + p0;
    t.a_rs = g.lda;
    t.a_cs = 1;
  }
}

// All tiles of one (mc × nc) block at depth [p0, p0+kc); i0/j0 are absolute offsets, i/j
// offsets inside the packed blocks.
template <class Kernel>
void run_block(const GemmArgs& g, const Operands& ops, int i0, int mc, int p0, int kc, int j0,
               int nc) {
  constexpr int MR = Kernel::MR, NR = Kernel::NR;
  TileArgs t;
  t.kc = kc;
  t.ldc = g.ldc;
  t.load_c = g.accumulate || p0 > 0;
  const bool last = p0 + kc >= g.k;
  t.relu = last && g.relu;
  t.ldmask = g.ldmask;
  t.sgd = g.sgd;
  // Points t at the tile of block rows from `ir` and columns from `jr`.
  auto place = [&](int ir, int jr) {
    t.mr = std::min(MR, mc - ir);
    set_a<Kernel>(g, ops, ops.a_packed ? ir : i0 + ir, p0, kc, t);
    t.nr = std::min(NR, nc - jr);
    t.stream_b = !ops.b_packed;
    if (ops.b_packed) {
      t.b = ops.b_packed + static_cast<long>(jr) * kc;
      t.b_rs = NR;
    } else {
      t.b = g.b + static_cast<long>(p0) * g.ldb + j0 + jr;
      t.b_rs = g.ldb;
    }
    t.c = g.c + static_cast<long>(i0 + ir) * g.ldc + j0 + jr;
    t.bias = last && g.bias ? g.bias + j0 + jr : nullptr;
    t.mask = last && g.relu_mask ? g.relu_mask + static_cast<long>(i0 + ir) * g.ldmask + j0 + jr : nullptr;
    t.velocity = last && g.velocity ? g.velocity + static_cast<long>(i0 + ir) * g.ldc + j0 + jr : nullptr;
  };
  int ir = 0;
  if constexpr (has_column<Kernel>::value) {
    if (nc <= NR && mc >= 2 * MR) {  // one tile wide: its whole-height tiles in one call
      place(0, 0);
      const long a_step = ops.a_packed ? static_cast<long>(MR) * kc : g.trans_a ? MR : static_cast<long>(MR) * g.lda;
      Kernel::column(t, mc / MR, a_step);
      ir = mc / MR * MR;
    }
  }
  for (; ir < mc; ir += MR) {
    int jr = 0;
    if constexpr (has_row<Kernel>::value) {
      const int whole = mc - ir >= MR ? nc / NR : 0;
      if (whole > 1) {
        place(ir, 0);
        Kernel::row(t, whole, ops.b_packed ? static_cast<long>(NR) * kc : NR);
        jr = whole * NR;
      }
    }
    for (; jr < nc; jr += NR) {
      place(ir, jr);
      Kernel::tile(t);
    }
  }
}

// Whether op(A) is packed into slivers rather than read in place: Aᵀ (and, where the kernel
// asks for it, untransposed A) only for deep slivers reused across many column tiles (see
// Blocking::pack_at_min_kn); untransposed A by its size.
bool packs_a(const GemmArgs& g, const Blocking& bl) {
  const bool deep_and_wide = g.k >= bl.pack_at_min_kn && g.n >= bl.pack_at_min_kn;
  if (g.trans_a) return deep_and_wide;
  const bool large = g.n >= bl.pack_a_min_n && g.m >= bl.pack_a_min_m;
  return large && (bl.pack_a == PackA::by_size || deep_and_wide);
}

template <class Kernel>
void run_blocks(const GemmArgs& g, const Blocking& bl) {
  constexpr int MR = Kernel::MR, NR = Kernel::NR;
  const bool want_a = packs_a(g, bl);
  const bool want_b = g.trans_b || g.m >= bl.pack_b_min_m;
  // Row blocks bound the packed A block; with A read in place and one depth block (no old
  // C to reload) they would only pack the same B block again for each.
  const int row_block = !want_a && g.k <= bl.kc ? g.m : bl.mc;
  const int mc_max = std::min(row_block, (g.m + MR - 1) / MR * MR);
  const int kc_max = std::min(bl.kc, g.k);
  const int nc_max = std::min(bl.nc, (g.n + NR - 1) / NR * NR);
  Operands ops;
  float* a_buf = want_a ? pack_buffer(PackSlot::a, static_cast<std::size_t>(mc_max) * kc_max) : nullptr;
  float* b_buf = want_b ? pack_buffer(PackSlot::b, static_cast<std::size_t>(nc_max) * kc_max) : nullptr;
  ops.a_packed = a_buf;
  ops.b_packed = b_buf;
  for (int i0 = 0; i0 < g.m; i0 += row_block) {
    const int mc = std::min(row_block, g.m - i0);
    for (int p0 = 0; p0 < g.k; p0 += bl.kc) {
      const int kc = std::min(bl.kc, g.k - p0);
      if (a_buf) pack_a<Kernel>(g, i0, mc, p0, kc, a_buf);
      for (int j0 = 0; j0 < g.n; j0 += bl.nc) {
        const int nc = std::min(bl.nc, g.n - j0);
        if (b_buf) pack_b<Kernel>(g, p0, kc, j0, nc, b_buf);
        run_block<Kernel>(g, ops, i0, mc, p0, kc, j0, nc);
      }
    }
  }
}

/// Single-threaded blocked GEMM for m, n, k > 0.
template <class Kernel>
void run_gemm(const GemmArgs& g, const Blocking& bl) {
  // Aᵀ read in place with its rows a multiple of 4 KiB apart: every depth of a sliver falls in
  // one L1 set and they evict each other (cnn.fc1.dw, m = 1024). Copied with rows 64 bytes
  // longer it reads in place without the conflicts, and the copy is k·m floats, a small
  // part of the product (bench_kernels shows the difference).
  constexpr int kPad = 16;
  if (g.trans_a && g.lda % 1024 == 0 && !packs_a(g, bl)) {
    const int lda = g.m + kPad;
    float* copy = pack_buffer(PackSlot::a, static_cast<std::size_t>(lda) * g.k);
    for (int p = 0; p < g.k; ++p)
      std::copy(g.a + static_cast<long>(p) * g.lda, g.a + static_cast<long>(p) * g.lda + g.m, copy + static_cast<long>(p) * lda);
    GemmArgs restrided = g;
    restrided.a = copy;
    restrided.lda = lda;
    return run_blocks<Kernel>(restrided, bl);
  }
  run_blocks<Kernel>(g, bl);
}

}  // namespace
}  // namespace starling::kernels::native
