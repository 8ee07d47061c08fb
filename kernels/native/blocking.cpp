// Cache sizes and the blocking derived from them for the native GEMM.
#include "kernels/native/blocking.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace starling::kernels::native {
namespace {

// Reads a sysfs cache size such as "1024K"; returns 0 when missing or unparsable.
long sysfs_cache(int index) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
  long value = 0;
  char unit = 0;
  if (!(in >> value)) return 0;
  if (in >> unit) {
    if (unit == 'K') value *= 1024;
    else if (unit == 'M') value *= 1024 * 1024;
  }
  return value;
}

// Values outside [lo, hi] are treated as unknown: VMs report anything from 0 to the whole
// socket's L3 as "per core".
long sane(long bytes, long lo, long hi, long fallback) {
  return bytes >= lo && bytes <= hi ? bytes : fallback;
}

int round_down(int value, int multiple) { return std::max(multiple, value / multiple * multiple); }

}  // namespace

CacheSizes cache_sizes() {
  CacheSizes c;
  c.l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  c.l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  c.l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  // index0 is L1d, index2 L2, index3 L3 on Linux x86.
  if (c.l1 <= 0) c.l1 = sysfs_cache(0);
  if (c.l2 <= 0) c.l2 = sysfs_cache(2);
  if (c.l3 <= 0) c.l3 = sysfs_cache(3);
  c.l1 = sane(c.l1, 16 << 10, 256 << 10, 32 << 10);
  c.l2 = sane(c.l2, 128 << 10, 8 << 20, 1 << 20);
  // Only a slice of L3 is ours when other cores are busy; cap what we plan for.
  c.l3 = std::min<long>(sane(c.l3, 1 << 20, 1L << 30, 8 << 20), 8 << 20);
  return c;
}

Blocking make_blocking(int mr, int nr, PackA pack_a) {
  const CacheSizes c = cache_sizes();
  Blocking b;
  // The A sliver (mr×kc) and one line of B rows must share L1 with C's tile: give A ~40%.
  b.kc = std::clamp(static_cast<int>(c.l1 * 2 / 5 / (mr * 4)), 128, 512);
  // B block kc×nc in about half of L2; the rest holds the A sliver and C lines streaming by.
  b.nc = round_down(std::clamp(static_cast<int>(c.l2 / 2 / (b.kc * 4)), nr, 4096), nr);
  // A block mc×kc in a share of L3.
  b.mc = round_down(std::clamp(static_cast<int>(c.l3 / 4 / (b.kc * 4)), mr, 4096), mr);
  // Measured on Zen 4 (bench_kernels): up to ~128 rows the in-place operands win.
  b.pack_a_min_n = 4 * nr;
  b.pack_a_min_m = 128;
  b.pack_b_min_m = 128;
  // Aᵀ in place wins on the weight-gradient shapes (k = batch, and 800×64×2048), whose A is
  // read few times; packing wins on large squares, which reread it (bench_kernels).
  b.pack_at_min_kn = 512;
  b.pack_a = pack_a;
  if (const char* env = std::getenv("STARLING_GEMM_BLOCKS")) {
    int mc = 0, kc = 0, nc = 0, pa = 0, pb = 0;
    const int got = std::sscanf(env, "%d,%d,%d,%d,%d", &mc, &kc, &nc, &pa, &pb);
    if (got >= 3 && mc > 0 && kc > 0 && nc > 0) {
      b.mc = round_down(mc, mr);
      b.kc = kc;
      b.nc = round_down(nc, nr);
    }
    if (got == 5) {  // the thresholds given are the whole rule
      b.pack_a = PackA::by_size;
      b.pack_a_min_n = pa;
      b.pack_a_min_m = pb;
      b.pack_b_min_m = pb;
    }
  }
  return b;
}

}  // namespace starling::kernels::native
