#pragma once
// Cache-blocking parameters of the native GEMM, derived from the cache sizes of the machine
// it runs on, plus the thresholds that decide when packing an operand is worth its copy.
namespace starling::kernels::native {

/// Which untransposed A is packed: by its size (pack_a_min_n, pack_a_min_m), or, besides,
/// only where n and k both reach pack_at_min_kn, as Aᵀ is.
enum class PackA { by_size, as_transposed };

struct Blocking {
  int mc = 0;  // rows of op(A) per packed block (sized for L3 / shared cache)
  int kc = 0;  // depth per block: an MR×kc sliver of A stays in L1 across the row of tiles
  int nc = 0;  // columns of op(B) per packed block: kc×nc stays in L2
  // Packing A costs m·k copies and saves little when each sliver is reused over few tiles
  // (small n) or when there are few slivers (small m: they are read in place from L1/L2).
  int pack_a_min_n = 0;
  int pack_a_min_m = 0;
  // Aᵀ read in place already gives the micro-kernel MR floats side by side per depth, so it
  // is packed only when both k and n reach this: deep slivers reused across many column
  // tiles, where walking k rows of a wide A page by page costs more than the copy.
  int pack_at_min_kn = 0;
  // Packing untransposed B costs k·n copies; for short m the strided rows are read directly.
  int pack_b_min_m = 0;
  PackA pack_a = PackA::by_size;  // the rule for untransposed A
};

struct CacheSizes {
  long l1 = 0, l2 = 0, l3 = 0;  // bytes of data cache per level
};

/// Data cache sizes from sysconf / sysfs, with defaults for a typical x86 core where the
/// system does not say (containers, VMs reporting nonsense).
CacheSizes cache_sizes();

/// Blocking for a micro-kernel of mr×nr. STARLING_GEMM_BLOCKS="mc,kc,nc[,pack_a_min_n,
/// pack_b_min_m]" overrides the derived sizes and thresholds (tuning runs and tests).
Blocking make_blocking(int mr, int nr, PackA pack_a = PackA::by_size);

}  // namespace starling::kernels::native
