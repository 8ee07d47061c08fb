// bench_ops: single-thread time of the non-GEMM kernels (im2col, col2im, max pooling, ReLU,
// column sums, transpose) on the CNN's shapes, once per ISA path (forced like STARLING_ISA),
// so the vectorized paths can be compared with the baseline build. Best of 7 samples of 20 calls.
//   bench_ops
#include "platform/cpu_features.h"
#include "kernels/ops.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace sk = starling::kernels;
namespace sp = starling::platform;

namespace {

double best_microseconds(const std::function<void()>& fn) {
  fn();
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 20);
  }
  return best * 1e6;
}

struct Case {
  std::string name;
  std::function<void()> run;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {  // no options: any argument, --help included, gets the usage
    const bool help = std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h";
    std::fprintf(help ? stdout : stderr, "usage: %s (no options; the CNN's shapes at batch 32, every ISA path)\n", argv[0]);
    return help ? 0 : 2;
  }
  // The CNN at batch 32: im2col/col2im per Conv2D chunk (9 and 2 samples), the rest whole.
  const sk::ConvShape conv1{9, 28, 28, 1, 5, 1, 0, 32}, conv2{2, 12, 12, 32, 5, 1, 0, 64};
  const sk::PoolShape pool1{32, 24, 24, 32, 2, 2}, pool2{32, 8, 8, 64, 2, 2};
  const long big = 32L * 24 * 24 * 32;
  std::vector<float> x(big), y(big), dx(big), cols(std::max(conv1.rows() * conv1.patch(), conv2.rows() * conv2.patch()));
  std::vector<int32_t> argmax(big);
  for (long i = 0; i < big; ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 1000.f - 0.3f;
  for (std::size_t i = 0; i < cols.size(); ++i) cols[i] = static_cast<float>(i % 13);
  sk::maxpool_forward(pool1, x.data(), y.data(), argmax.data());
  const std::vector<Case> cases = {
      {"im2col conv1 (9 samples)", [&] { sk::im2col(conv1, x.data(), cols.data()); }},
      {"im2col conv2 (2 samples)", [&] { sk::im2col(conv2, x.data(), cols.data()); }},
      {"col2im conv2 (2 samples)", [&] { sk::col2im(conv2, cols.data(), dx.data()); }},
      {"maxpool fwd 24x24x32 b32", [&] { sk::maxpool_forward(pool1, x.data(), y.data(), argmax.data()); }},
      {"maxpool bwd 24x24x32 b32", [&] { sk::maxpool_backward(pool1, y.data(), argmax.data(), dx.data()); }},
      {"maxpool fwd 8x8x64 b32", [&] { sk::maxpool_forward(pool2, x.data(), y.data(), argmax.data()); }},
      {"relu fwd 589824", [&] { sk::relu_forward(big, x.data(), y.data()); }},
      {"relu bwd 589824", [&] { sk::relu_backward(big, x.data(), y.data(), dx.data()); }},
      {"column_sums 18432x32", [&] { sk::column_sums(18432, 32, x.data(), y.data(), false); }},
      {"column_sums 32x128", [&] { sk::column_sums(32, 128, x.data(), y.data(), false); }},
      {"transpose conv2 W 800x64", [&] { sk::transpose(800, 64, x.data(), y.data()); }},
  };
  std::printf("%-26s %10s %10s %10s   (µs per call)\n", "op", "scalar", "avx2", "avx512");
  for (const Case& c : cases) {
    std::printf("%-26s", c.name.c_str());
    for (sp::Isa isa : {sp::Isa::scalar, sp::Isa::avx2, sp::Isa::avx512}) {
      if (static_cast<int>(isa) > static_cast<int>(sp::detected_isa())) {
        std::printf(" %10s", "-");
        continue;
      }
      sp::force_isa(isa);
      std::printf(" %10.1f", best_microseconds(c.run));
    }
    std::printf("\n");
  }
  return 0;
}
