// bench_kernels: single-thread GEMM throughput of Starling's native kernels against oneDNN
// and OpenBLAS on square and training shapes. Backends run interleaved (native, oneDNN,
// OpenBLAS, native, ...) so clock and cache drift hit all alike; the medians are reported,
// and native/oneDNN is the median of the per-round ratios.
//   bench_kernels [--quick] [--json FILE] [--filter SUBSTRING]
#include "fma_peak.h"
#include "gemm_cases.h"
#include "platform/cpu_features.h"
#include "kernels/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace sk = starling::kernels;
namespace sp = starling::platform;
namespace sb = starling::bench;

namespace {

struct Options {
  bool quick = false;
  std::string json;
  std::string filter;  // run only cases whose op contains this
};

struct Row {
  sb::GemmCase c;
  double native = 0, onednn = 0, openblas = 0;  // GFLOP/s, medians
  // The median of native/oneDNN within each round (samples taken a few ms apart): this VM's
  // speed can change between rounds, which a ratio of the two medians would mix in.
  double native_over_onednn = 0;
};

struct Operands {
  std::vector<float> a, b, c;
  sk::GemmArgs args;
};

Operands make_operands(const sb::GemmCase& gc, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Operands o;
  o.a.resize(static_cast<size_t>(gc.m) * gc.k);
  o.b.resize(static_cast<size_t>(gc.k) * gc.n);
  o.c.assign(static_cast<size_t>(gc.m) * gc.n, 0.f);
  for (float& x : o.a) x = u(rng);
  for (float& x : o.b) x = u(rng);
  sk::GemmArgs& g = o.args;
  g.m = gc.m;
  g.n = gc.n;
  g.k = gc.k;
  g.a = o.a.data();
  g.trans_a = gc.trans_a;
  g.lda = gc.trans_a ? gc.m : gc.k;
  g.b = o.b.data();
  g.trans_b = gc.trans_b;
  g.ldb = gc.trans_b ? gc.k : gc.n;
  g.c = o.c.data();
  g.ldc = gc.n;
  return o;
}

void run_openblas(const sk::GemmArgs& g) {
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
              g.trans_b ? CblasTrans : CblasNoTrans, g.m, g.n, g.k, 1.f, g.a, g.lda, g.b, g.ldb,
              0.f, g.c, g.ldc);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Calls per timed sample so one sample lasts about `target` seconds.
int calls_for(const std::function<void()>& fn, double target) {
  fn();
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  const double once = std::max(seconds_since(t0), 1e-7);
  return std::clamp(static_cast<int>(target / once), 1, 100000);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Row measure(const sb::GemmCase& gc, const Options& opt, std::mt19937& rng) {
  Operands o = make_operands(gc, rng);
  const sk::GemmArgs g = o.args;
  const std::function<void()> fns[3] = {[&] { sk::gemm(sk::Backend::native, g); },
                                        [&] { sk::gemm(sk::Backend::onednn, g); },
                                        [&] { run_openblas(g); }};
  const double target = opt.quick ? 0.002 : 0.005;
  int calls[3];
  for (int b = 0; b < 3; ++b) calls[b] = calls_for(fns[b], target);
  std::vector<double> gflops[3];
  const double flops = 2.0 * gc.m * gc.n * gc.k;
  const int reps = opt.quick ? 5 : 11;
  for (int r = 0; r < reps; ++r) {
    for (int b = 0; b < 3; ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls[b]; ++i) fns[b]();
      gflops[b].push_back(flops * calls[b] / seconds_since(t0) * 1e-9);
    }
  }
  std::vector<double> ratios;
  for (int r = 0; r < reps; ++r) ratios.push_back(gflops[0][r] / gflops[1][r]);
  return {gc, median(gflops[0]), median(gflops[1]), median(gflops[2]), median(ratios)};
}

void print_row(const Row& r, double peak) {
  std::printf("%-22s %6d %6d %6d  %8.1f %8.1f %8.1f  %6.2f  %5.1f%%\n", r.c.op.c_str(), r.c.m,
              r.c.n, r.c.k, r.native, r.onednn, r.openblas, r.native_over_onednn,
              peak > 0 ? 100.0 * r.native / peak : 0.0);
  std::fflush(stdout);
}

bool write_json(const std::string& path, const std::vector<Row>& rows, double peak) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "[\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f,
                 "  {\"op\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, \"trans_a\": %s, "
                 "\"trans_b\": %s, \"native_gflops\": %.2f, \"onednn_gflops\": %.2f, "
                 "\"openblas_gflops\": %.2f, \"native_over_onednn\": %.3f, "
                 "\"peak_gflops\": %.2f, \"native_pct_peak\": %.1f, \"isa\": \"%s\"}%s\n",
                 r.c.op.c_str(), r.c.m, r.c.n, r.c.k, r.c.trans_a ? "true" : "false",
                 r.c.trans_b ? "true" : "false", r.native, r.onednn, r.openblas,
                 r.native_over_onednn, peak, peak > 0 ? 100.0 * r.native / peak : 0.0,
                 std::string(sp::isa_name(sp::active_isa())).c_str(), i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "]\n");
  return std::fclose(f) == 0;
}

bool parse(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) opt.quick = true;
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) opt.json = argv[++i];
    else if (std::strcmp(argv[i], "--filter") == 0 && i + 1 < argc) opt.filter = argv[++i];
    else return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse(argc, argv, opt)) {
    std::fprintf(stderr, "usage: %s [--quick] [--json FILE] [--filter SUBSTRING]\n", argv[0]);
    return 2;
  }
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  openblas_set_num_threads(1);
  sk::set_threads(1);
  const double peak = sb::fma_peak_gflops(sp::active_isa());
  std::printf("isa %s, measured FMA peak %.1f GFLOP/s (1 core)\n\n",
              std::string(sp::isa_name(sp::active_isa())).c_str(), peak);
  std::printf("%-22s %6s %6s %6s  %8s %8s %8s  %6s  %6s\n", "op", "m", "n", "k", "native",
              "oneDNN", "OpenBLAS", "n/oDNN", "%peak");
  std::vector<sb::GemmCase> cases = sb::square_cases();
  const std::vector<sb::GemmCase> training =
      sb::training_cases(opt.quick ? std::vector<int>{8, 32} : std::vector<int>{8, 16, 32, 128});
  cases.insert(cases.end(), training.begin(), training.end());
  const std::vector<sb::GemmCase> gpt = sb::gpt_cases();
  cases.insert(cases.end(), gpt.begin(), gpt.end());
  std::mt19937 rng(7);
  std::vector<Row> rows;
  for (const sb::GemmCase& c : cases) {
    if (c.op.find(opt.filter) == std::string::npos) continue;
    rows.push_back(measure(c, opt, rng));
    print_row(rows.back(), peak);
  }
  if (!opt.json.empty() && !write_json(opt.json, rows, peak)) {
    std::fprintf(stderr, "cannot write %s\n", opt.json.c_str());
    return 1;
  }
  return 0;
}
