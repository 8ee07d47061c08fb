#include "learners/tasks/loss.h"

#include "kernels/ops.h"
#include "kernels/sequence_ops.h"

namespace starling {

double softmax_cross_entropy(int batch, int classes, const float* logits, const int32_t* labels, float* dlogits) {
  return kernels::softmax_xent(batch, classes, logits, labels, dlogits);
}

// Every position is a row of its own: the mean over batch·context rows is the mean per token.
double sequence_cross_entropy(int batch, int context, int vocab, const float* logits, const int32_t* targets,
                              float* dlogits) {
  return kernels::vocab_cross_entropy(static_cast<long>(batch) * context, vocab, logits, targets, dlogits);
}

double mse_onehot(int batch, int classes, const float* outputs, const int32_t* labels, float* doutputs) {
  double total = 0.0;
  for (int i = 0; i < batch; ++i)
    for (int j = 0; j < classes; ++j) {
      const long at = static_cast<long>(i) * classes + j;
      const float diff = outputs[at] - (labels[i] == j ? 1.f : 0.f);
      total += 0.5 * diff * diff;
      if (doutputs) doutputs[at] = diff / static_cast<float>(batch);
    }
  return total / batch;
}

}  // namespace starling
