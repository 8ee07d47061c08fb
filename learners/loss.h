#pragma once
// Losses over a batch of model outputs; each returns the mean loss and writes the gradient
// with respect to the outputs.
#include <cstdint>

namespace starling {

/// Softmax cross-entropy against integer labels.
double softmax_cross_entropy(int batch, int classes, const float* logits, const int32_t* labels, float* dlogits);

/// Mean squared error against one-hot labels: (1/batch) Σ_i Σ_j ½ (y_ij − onehot_ij)².
double mse_onehot(int batch, int classes, const float* outputs, const int32_t* labels, float* doutputs);

}  // namespace starling
