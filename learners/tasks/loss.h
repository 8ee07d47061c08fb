#pragma once
// Losses over a batch of model outputs; each returns the mean loss and writes the gradient
// with respect to the outputs.
#include <cstdint>

namespace starling {

/// Softmax cross-entropy against integer labels.
double softmax_cross_entropy(int batch, int classes, const float* logits, const int32_t* labels, float* dlogits);

/// Softmax cross-entropy over a vocabulary at every position of a sequence: logits
/// [batch·context × vocab] against each position's next token; the mean over all
/// batch·context positions, in nats (PyTorch's F.cross_entropy on the flattened logits). For
/// byte tokens, bits per byte is this / ln 2. dlogits as softmax_cross_entropy's.
double sequence_cross_entropy(int batch, int context, int vocab, const float* logits, const int32_t* targets,
                              float* dlogits);

/// Mean squared error against one-hot labels: (1/batch) Σ_i Σ_j ½ (y_ij − onehot_ij)².
double mse_onehot(int batch, int classes, const float* outputs, const int32_t* labels, float* doutputs);

}  // namespace starling
