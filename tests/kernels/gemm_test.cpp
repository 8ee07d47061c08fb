// GEMM tests: every ISA path this CPU supports (forced with force_isa) and the oneDNN
// backend against a double-precision reference, over odd shapes, all transpose
// combinations, accumulate on/off, each epilogue option (the SGD epilogue too) and padded
// leading dimensions.
// Outputs are poisoned with NaN first so an element the kernel forgets to write fails.
#define BOOST_TEST_MODULE kernels_gemm
#include <boost/test/unit_test.hpp>

#include "platform/cpu_features.h"
#include "tests/isa_paths.h"
#include "kernels/gemm.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sk = starling::kernels;
namespace sp = starling::platform;

namespace {

// Variants of this suite force tiny cache blocks through the environment before any GEMM
// has computed (and cached) its blocking.
struct BlockingFixture {
  BlockingFixture() {
#ifdef STARLING_TEST_BLOCKS
    setenv("STARLING_GEMM_BLOCKS", STARLING_TEST_BLOCKS, 1);
#endif
  }
};
BOOST_TEST_GLOBAL_FIXTURE(BlockingFixture);

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kSentinel = 12345.f;  // fills C's padding columns, which must stay untouched

enum Epilogue { none = 0, bias = 1, relu = 2, mask = 4, sgd = 8 };

struct Case {
  int m, n, k;
  bool ta, tb, acc;
  int epi;   // Epilogue bits
  int pad;   // extra leading-dimension columns on every operand
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << c.m << "x" << c.n << "x" << c.k << (c.ta ? " At" : " A") << (c.tb ? " Bt" : " B")
    << (c.acc ? " +=" : " =") << " epi=" << c.epi << " pad=" << c.pad;
  return s.str();
}

// Operands stored with their padding filled with NaN so reading outside op(A)/op(B) shows.
struct Problem {
  Case c;
  int lda, ldb, ldc, ldm;
  std::vector<float> a, b, c0, bias, mask, v0;  // v0: the SGD epilogue's velocity, laid out like C
  sk::SgdArgs step;
};

Problem make_problem(const Case& cs, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Problem p{cs, 0, 0, 0, 0, {}, {}, {}, {}, {}, {}, {}};
  const int a_rows = cs.ta ? cs.k : cs.m, a_cols = cs.ta ? cs.m : cs.k;
  const int b_rows = cs.tb ? cs.n : cs.k, b_cols = cs.tb ? cs.k : cs.n;
  p.lda = a_cols + cs.pad;
  p.ldb = b_cols + cs.pad;
  p.ldc = cs.n + cs.pad;
  p.ldm = cs.n + cs.pad + 3;
  p.a.assign(static_cast<size_t>(a_rows) * p.lda, kNaN);
  p.b.assign(static_cast<size_t>(b_rows) * p.ldb, kNaN);
  for (int r = 0; r < a_rows; ++r)
    for (int q = 0; q < a_cols; ++q) p.a[static_cast<size_t>(r) * p.lda + q] = u(rng);
  for (int r = 0; r < b_rows; ++r)
    for (int q = 0; q < b_cols; ++q) p.b[static_cast<size_t>(r) * p.ldb + q] = u(rng);
  p.c0.assign(static_cast<size_t>(cs.m) * p.ldc, kSentinel);
  for (int i = 0; i < cs.m; ++i)
    for (int j = 0; j < cs.n; ++j) p.c0[static_cast<size_t>(i) * p.ldc + j] = cs.acc || (cs.epi & sgd) ? u(rng) : kNaN;
  if (cs.epi & sgd) {
    p.v0 = p.c0;
    for (int i = 0; i < cs.m; ++i)
      for (int j = 0; j < cs.n; ++j) p.v0[static_cast<size_t>(i) * p.ldc + j] = u(rng);
    p.step = {0.5f, 0.9f, 0.01f, (cs.m + cs.n) % 2 == 0};
  }
  if (cs.epi & bias) {
    p.bias.resize(cs.n);
    for (float& x : p.bias) x = u(rng);
  }
  if (cs.epi & mask) {
    // Exact zeros and negatives must both clear C; positives keep it.
    const float levels[] = {-1.f, 0.f, 0.5f, 2.f};
    p.mask.assign(static_cast<size_t>(cs.m) * p.ldm, kNaN);
    for (int i = 0; i < cs.m; ++i)
      for (int j = 0; j < cs.n; ++j) p.mask[static_cast<size_t>(i) * p.ldm + j] = levels[rng() % 4];
  }
  return p;
}

sk::GemmArgs args_for(const Problem& p, std::vector<float>& c, std::vector<float>& v) {
  sk::GemmArgs g;
  g.m = p.c.m;
  g.n = p.c.n;
  g.k = p.c.k;
  g.a = p.a.data();
  g.lda = p.lda;
  g.trans_a = p.c.ta;
  g.b = p.b.data();
  g.ldb = p.ldb;
  g.trans_b = p.c.tb;
  g.c = c.data();
  g.ldc = p.ldc;
  g.accumulate = p.c.acc;
  g.bias = p.bias.empty() ? nullptr : p.bias.data();
  g.relu = p.c.epi & relu;
  g.relu_mask = p.mask.empty() ? nullptr : p.mask.data();
  g.ldmask = p.ldm;
  g.velocity = v.empty() ? nullptr : v.data();
  g.sgd = p.step;
  return g;
}

// Checks C against the double reference; the bound scales with Σ|a·b| so it is relative to
// the magnitudes summed, not to a result that may cancel to near zero.
// The SGD epilogue's step in double on parameter w and velocity v with gradient g; the bound
// carries the gradient's through both.
struct SgdResult {
  double w, v, tol_w, tol_v;
};
SgdResult sgd_reference(const sk::SgdArgs& a, double w, double v, double g, double tol_g) {
  const double gp = g + a.weight_decay * w;
  const double vel = a.momentum * v + gp;
  const double step = a.nesterov ? gp + a.momentum * vel : vel;
  const double tol_v = tol_g + 1e-6 * (std::fabs(v) + std::fabs(gp) + 1.0);
  return {w - a.lr * step, vel, a.lr * 2.0 * tol_v + 1e-6 * (std::fabs(w) + 1.0), tol_v};
}

void check(const Problem& p, const std::vector<float>& c, const std::vector<float>& v, const std::string& who) {
  const Case& cs = p.c;
  int bad = 0;
  for (int i = 0; i < cs.m && bad < 5; ++i) {
    for (int j = 0; j < cs.n && bad < 5; ++j) {
      double sum = 0, scale = 0;
      for (int q = 0; q < cs.k; ++q) {
        const double av = cs.ta ? p.a[static_cast<size_t>(q) * p.lda + i] : p.a[static_cast<size_t>(i) * p.lda + q];
        const double bv = cs.tb ? p.b[static_cast<size_t>(j) * p.ldb + q] : p.b[static_cast<size_t>(q) * p.ldb + j];
        sum += av * bv;
        scale += std::fabs(av * bv);
      }
      const size_t at = static_cast<size_t>(i) * p.ldc + j;
      if (cs.acc) {
        sum += p.c0[at];
        scale += std::fabs(p.c0[at]);
      }
      if (cs.epi & bias) {
        sum += p.bias[j];
        scale += std::fabs(p.bias[j]);
      }
      if ((cs.epi & relu) && !(sum > 0)) sum = 0;
      if ((cs.epi & mask) && !(p.mask[static_cast<size_t>(i) * p.ldm + j] > 0)) sum = 0;
      double tol = 2e-6 * (scale + 1.0) * (1.0 + std::sqrt(static_cast<double>(cs.k)));
      if (cs.epi & sgd) {
        const SgdResult want = sgd_reference(p.step, p.c0[at], p.v0[at], sum, tol);
        if (!(std::fabs(v[at] - want.v) <= want.tol_v) && bad++ < 5)
          BOOST_ERROR(who << " " << describe(cs) << " velocity[" << i << "," << j << "] = " << v[at] << ", want " << want.v);
        sum = want.w;
        tol = want.tol_w;
      }
      const double got = c[at];
      if (!(std::fabs(got - sum) <= tol)) {
        ++bad;
        BOOST_ERROR(who << " " << describe(cs) << " C[" << i << "," << j << "] = " << got
                        << ", want " << sum);
      }
    }
    for (int j = cs.n; j < p.ldc; ++j) {
      const std::size_t at = static_cast<size_t>(i) * p.ldc + j;
      const float got = c[at];
      if (std::memcmp(&got, &kSentinel, sizeof got) != 0 && bad++ < 5)
        BOOST_ERROR(who << " " << describe(cs) << " wrote padding C[" << i << "," << j << "]");
      if (!v.empty() && std::memcmp(&v[at], &kSentinel, sizeof got) != 0 && bad++ < 5)
        BOOST_ERROR(who << " " << describe(cs) << " wrote padding velocity[" << i << "," << j << "]");
    }
  }
}

void run_case(const Case& cs, std::mt19937& rng) {
  const Problem p = make_problem(cs, rng);
  for (sp::Isa isa : starling::testing::supported_isas()) {
    sp::force_isa(isa);
    std::vector<float> c = p.c0, v = p.v0;
    sk::gemm(sk::Backend::native, args_for(p, c, v));
    check(p, c, v, "native/" + std::string(sp::isa_name(isa)));
  }
  sp::force_isa(sp::detected_isa());
  if (!sk::backend_available(sk::Backend::onednn)) return;
  std::vector<float> c = p.c0, v = p.v0;
  sk::gemm(sk::Backend::onednn, args_for(p, c, v));
  check(p, c, v, "onednn");
}

const int kEpilogues[] = {none, bias, relu, bias | relu, mask, bias | relu | mask};

}  // namespace

BOOST_AUTO_TEST_CASE(every_option_on_one_odd_shape) {
  std::mt19937 rng(1);
  for (int t = 0; t < 4; ++t)
    for (bool acc : {false, true})
      for (int epi : kEpilogues) run_case({37, 45, 29, (t & 1) != 0, (t & 2) != 0, acc, epi, 3}, rng);
}

BOOST_AUTO_TEST_CASE(random_shapes_all_transposes) {
  std::mt19937 rng(2);
  const int sizes[] = {1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 32, 33, 47, 64, 97, 130};
  std::uniform_int_distribution<int> pick(0, sizeof(sizes) / sizeof(sizes[0]) - 1);
  for (int r = 0; r < 40; ++r) {
    const int m = sizes[pick(rng)], n = sizes[pick(rng)], k = sizes[pick(rng)];
    for (int t = 0; t < 4; ++t)
      run_case({m, n, k, (t & 1) != 0, (t & 2) != 0, (r & 1) != 0, kEpilogues[(r + t) % 6], r % 3 * 5}, rng);
  }
}

BOOST_AUTO_TEST_CASE(shapes_crossing_cache_blocks) {
  std::mt19937 rng(3);
  const Case cases[] = {{211, 401, 523, false, false, false, bias | relu, 0},
                        {149, 353, 1031, false, true, true, none, 7},
                        {389, 97, 601, true, false, false, mask, 1},
                        {67, 677, 541, true, true, true, bias | relu | mask, 2}};
  for (const Case& c : cases) run_case(c, rng);
}

BOOST_AUTO_TEST_CASE(training_shapes) {
  // MLP 784-256-128-10 and CNN GEMMs at small batches: the in-place (unpacked) paths.
  std::mt19937 rng(4);
  for (int batch : {8, 13, 32}) {
    run_case({batch, 256, 784, false, false, false, bias | relu, 0}, rng);
    run_case({batch, 784, 256, false, true, false, none, 0}, rng);
    run_case({784, 256, batch, true, false, true, none, 0}, rng);
    run_case({batch, 10, 128, false, false, false, bias, 0}, rng);
    run_case({batch, 128, 10, false, true, false, mask, 0}, rng);
    run_case({128, 10, batch, true, false, false, none, 0}, rng);
    run_case({batch * 64, 64, 800, false, false, false, bias | relu, 0}, rng);
    run_case({batch * 36, 32, 25, false, false, false, bias | relu, 0}, rng);
    run_case({25, 32, batch * 36, true, false, false, none, 0}, rng);
    // Aᵀ rows 4 KiB apart (the CNN's fc1 weight gradient; then m = 1000 padded to 1024):
    // read through a copy with longer rows.
    run_case({1024, 128, batch, true, false, batch == 13, none, 0}, rng);
    run_case({1000, 40, batch, true, false, false, bias | relu | mask, 24}, rng);
  }
}

BOOST_AUTO_TEST_CASE(a_times_b_transposed_at_training_rows) {
  // The A·Bᵀ kernels chosen by shape (k ≥ 16: dot product below 16 rows, Cᵀ = B·Aᵀ up to 64,
  // the blocked kernel above; k < 16: the blocked kernel with a vector-transposed B panel):
  // every row count around the 8/16/32-lane tiles, columns that leave partial 8-column tiles
  // and 16-column transpose blocks, depths on both sides of 16, all epilogues.
  std::mt19937 rng(7);
  const int depths[] = {1, 10, 15, 16, 33, 128};
  int r = 0;
  for (int m = 1; m <= 66; m += (m < 18 || (m > 30 && m < 34) || m > 62) ? 1 : 7)
    for (int n : {1, 7, 9, 24, 45}) {
      const int k = depths[r % 6];
      run_case({m, n, k, false, true, (r & 1) != 0, kEpilogues[r % 6], r % 3 * 2}, rng);
      ++r;
    }
}

BOOST_AUTO_TEST_CASE(four_row_tiles_across_ragged_panels) {
  // Row counts that 4 divides and 6 does not take AVX2's 4 × 24 tiles: widths around whole
  // 24-column panels and their 8/16-column rests, every transpose, every epilogue and the
  // SGD step, at depths of a batch and past a K block.
  std::mt19937 rng(9);
  int r = 0;
  for (int m : {4, 8, 20, 32, 44})
    for (int n : {3, 8, 17, 24, 31, 48, 49, 71}) {
      const int k = r % 3 == 0 ? 8 : r % 3 == 1 ? 33 : 613;
      const bool ta = (r & 1) != 0, tb = (r & 2) != 0;
      run_case({m, n, k, ta, tb, (r & 4) != 0, kEpilogues[r % 6], r % 3}, rng);
      run_case({m, n, k, ta, tb, false, sgd, r % 2 * 3}, rng);
      ++r;
    }
}

BOOST_AUTO_TEST_CASE(zero_depth_writes_the_epilogue_of_zero) {
  std::mt19937 rng(5);
  for (bool acc : {false, true}) run_case({5, 9, 0, false, false, acc, bias | relu, 1}, rng);
  run_case({5, 9, 0, true, false, false, sgd, 1}, rng);  // a step on weight decay alone
}

BOOST_AUTO_TEST_CASE(sgd_epilogue_updates_parameters_and_velocity) {
  // The weight-gradient shapes it serves (Aᵀ·B at k = batch) with ragged tiles, every
  // transpose, depths past one K block (the fallback through a scratch gradient), and the
  // threaded split.
  std::mt19937 rng(8);
  for (int t = 0; t < 4; ++t) run_case({37, 45, 29, (t & 1) != 0, (t & 2) != 0, false, sgd, 3}, rng);
  for (int batch : {1, 8, 13, 32}) {
    run_case({784, 256, batch, true, false, false, sgd, 0}, rng);
    run_case({130, 47, batch, true, false, false, sgd, 5}, rng);
    run_case({128, 10, batch, true, false, false, sgd, 0}, rng);
  }
  run_case({97, 130, 1031, true, false, false, sgd, 2}, rng);
  // From 64 columns at depths up to 16 the AVX-512 kernel's 6×64 tiles: rows past a
  // multiple of 6, the last tile 1 to 4 vectors wide or the whole width (one tile down the
  // column), A packed.
  for (int t = 0; t < 4; ++t) run_case({131, 150, 13, (t & 1) != 0, (t & 2) != 0, false, sgd, 1}, rng);
  for (int n : {64, 65, 100, 120, 192}) run_case({61, n, 8, true, false, false, sgd, 0}, rng);
  run_case({5, 70, 3, true, false, false, sgd, 0}, rng);
  // Under 16 columns, C contiguous: the product first, then one step over all of C.
  for (int pad : {0, 3}) run_case({37, 7, 9, true, false, false, sgd, pad}, rng);
  run_case({200, 300, 16, false, false, false, sgd, 4}, rng);
  sk::set_threads(2);
  run_case({2000, 256, 32, true, false, false, sgd, 0}, rng);  // split in two, each half fused
  run_case({784, 256, 2000, true, false, false, sgd, 0}, rng);
  sk::set_threads(1);
}

BOOST_AUTO_TEST_CASE(sgd_epilogue_with_another_option_is_rejected) {
  std::vector<float> a(16, 1.f), b(16, 1.f), c(16, 0.f), v(16, 0.f);
  sk::GemmArgs g;
  g.m = g.n = g.k = g.lda = g.ldb = g.ldc = 4;
  g.a = a.data();
  g.b = b.data();
  g.c = c.data();
  g.velocity = v.data();
  g.relu = true;
  BOOST_CHECK_THROW(sk::gemm(sk::Backend::native, g), std::invalid_argument);
  g.relu = false;
  g.accumulate = true;
  BOOST_CHECK_THROW(sk::gemm(sk::Backend::native, g), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(two_threads_match_one) {
  std::mt19937 rng(6);
  sk::set_threads(2);
  run_case({300, 250, 200, false, false, false, bias | relu | mask, 1}, rng);
  run_case({97, 500, 300, true, true, true, none, 0}, rng);
  sk::set_threads(1);
}

BOOST_AUTO_TEST_CASE(bad_leading_dimension_is_rejected_not_fatal) {
  std::vector<float> a(16, 1.f), b(16, 1.f), c(16, 0.f);
  sk::GemmArgs g;
  g.m = g.n = g.k = 4;
  g.a = a.data();
  g.b = b.data();
  g.c = c.data();
  g.lda = g.ldb = 4;
  g.ldc = 3;
  BOOST_CHECK_THROW(sk::gemm(sk::Backend::native, g), std::invalid_argument);
  g.m = 0;
  BOOST_CHECK_NO_THROW(sk::gemm(sk::Backend::native, g));
}
