// Shapes of the benchmark. A dense layer y[B×out] = x[B×in]·W[in×out] trains with three
// GEMMs: forward (B, out, in), input gradient dY·Wᵀ (B, in, out; trans_b) and weight
// gradient Xᵀ·dY (in, out, B; trans_a). im2col convolutions are dense layers whose rows are
// batch × output pixels and whose inputs are patches.
#include "gemm_cases.h"

namespace starling::bench {
namespace {

void add_dense(std::vector<GemmCase>& out, const std::string& name, int rows, int in, int outs,
               int batch) {
  const std::string tag = " b" + std::to_string(batch);
  out.push_back({name + ".fwd" + tag, rows, outs, in, false, false});
  out.push_back({name + ".dx" + tag, rows, in, outs, false, true});
  out.push_back({name + ".dw" + tag, in, outs, rows, true, false});
}

}  // namespace

std::vector<GemmCase> square_cases() {
  std::vector<GemmCase> out;
  for (int s : {256, 512, 1024}) out.push_back({"square", s, s, s, false, false});
  return out;
}

std::vector<GemmCase> training_cases(const std::vector<int>& batches) {
  std::vector<GemmCase> out;
  for (int b : batches) {
    add_dense(out, "mlp.fc1", b, 784, 256, b);
    add_dense(out, "mlp.fc2", b, 256, 128, b);
    add_dense(out, "mlp.fc3", b, 128, 10, b);
    add_dense(out, "cnn.conv1", b * 24 * 24, 25, 32, b);
    add_dense(out, "cnn.conv2", b * 8 * 8, 800, 64, b);
    add_dense(out, "cnn.fc1", b, 1024, 128, b);
    add_dense(out, "cnn.fc2", b, 128, 10, b);
  }
  return out;
}

}  // namespace starling::bench
