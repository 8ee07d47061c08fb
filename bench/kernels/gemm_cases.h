#pragma once
// The GEMM shapes the kernel benchmark runs: squares, and the training GEMMs (forward,
// input gradient, weight gradient) of the MLP 784-256-128-10, the small NHWC CNN and the
// GPT preset.
#include <string>
#include <vector>

namespace starling::bench {

struct GemmCase {
  std::string op;  // e.g. "mlp.fc1.fwd b32"
  int m, n, k;
  bool trans_a, trans_b;
};

std::vector<GemmCase> square_cases();
std::vector<GemmCase> training_cases(const std::vector<int>& batches);
std::vector<GemmCase> gpt_cases();

}  // namespace starling::bench
