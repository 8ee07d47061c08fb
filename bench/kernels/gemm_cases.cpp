// Shapes of the benchmark. A dense layer y[B×out] = x[B×in]·W[in×out] trains with three
// GEMMs: forward (B, out, in), input gradient dY·Wᵀ (B, in, out; trans_b) and weight
// gradient Xᵀ·dY (in, out, B; trans_a). im2col convolutions are dense layers whose rows are
// batch × output pixels and whose inputs are patches; Conv2D runs them in chunks of samples,
// listed as ".chunk" cases.
#include "gemm_cases.h"

#include <algorithm>

namespace starling::bench {
namespace {

void add_dense(std::vector<GemmCase>& out, const std::string& name, int rows, int in, int outs,
               int batch) {
  const std::string tag = " b" + std::to_string(batch);
  out.push_back({name + ".fwd" + tag, rows, outs, in, false, false});
  out.push_back({name + ".dx" + tag, rows, in, outs, false, true});
  out.push_back({name + ".dw" + tag, in, outs, rows, true, false});
}

// The GEMMs Conv2D issues per chunk of samples (learners/layers/conv2d.cpp): forward and
// weight gradient over chunks whose patches fit in 512 KB, the input gradient over chunks
// of < 128 rows against a pre-transposed W (so trans_b is false).
void add_conv_chunks(std::vector<GemmCase>& out, const std::string& name, int pixels, int patch, int outs,
                     int batch) {
  const int per_chunk = std::max(1, std::min(batch, (512 << 10) / (pixels * patch * 4)));
  const int dx_chunk = std::max(1, std::min(batch, 127 / pixels));
  const std::string tag = " b" + std::to_string(batch);
  out.push_back({name + ".fwd.chunk" + tag, per_chunk * pixels, outs, patch, false, false});
  out.push_back({name + ".dx.chunk" + tag, dx_chunk * pixels, patch, outs, false, false});
  out.push_back({name + ".dw.chunk" + tag, patch, outs, per_chunk * pixels, true, false});
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
    add_conv_chunks(out, "cnn.conv1", 24 * 24, 25, 32, b);
    add_conv_chunks(out, "cnn.conv2", 8 * 8, 800, 64, b);
    add_dense(out, "cnn.fc1", b, 1024, 128, b);
    add_dense(out, "cnn.fc2", b, 128, 10, b);
  }
  return out;
}

std::vector<GemmCase> gpt_cases() {
  // The gpt-nano preset at batch 12 × context 64: the QKV, attention output and MLP projections,
  // and the tied head (logits = h·Eᵀ, its input gradient dlogits·E, its gradient dlogitsᵀ·h).
  const int rows = 12 * 64, width = 128, vocab = 256;
  std::vector<GemmCase> out;
  add_dense(out, "gpt.qkv", rows, width, 3 * width, 12);
  add_dense(out, "gpt.proj", rows, width, width, 12);
  add_dense(out, "gpt.fc", rows, width, 4 * width, 12);
  add_dense(out, "gpt.fc_proj", rows, 4 * width, width, 12);
  out.push_back({"gpt.head.fwd b12", rows, vocab, width, false, true});
  out.push_back({"gpt.head.dx b12", rows, width, vocab, false, false});
  out.push_back({"gpt.head.dw b12", vocab, width, rows, true, false});
  // The gpt-10m preset at batch 12 × context 256, width 384: its four projections.
  const int rows10 = 12 * 256, width10 = 384;
  add_dense(out, "gpt10m.qkv", rows10, width10, 3 * width10, 12);
  add_dense(out, "gpt10m.proj", rows10, width10, width10, 12);
  add_dense(out, "gpt10m.fc", rows10, width10, 4 * width10, 12);
  add_dense(out, "gpt10m.fc_proj", rows10, 4 * width10, width10, 12);
  return out;
}

}  // namespace starling::bench
