#pragma once
// Direct convolution for stride 1 on NHWC, without im2col: the
// micro-kernel reads each output pixel's window straight from a zero-bordered copy of the
// input, one window row (kernel·in_c contiguous floats) at a time, and keeps a tile of
// outputs in registers across the window's rows. im2col would write kernel² copies of the
// input to cache and read them back; here the input is copied once, with its border.
// The input gradient of such a convolution is the same operation on the output gradient
// with the window flipped (flip_weights); the weight gradient reads the windows in place too.
// Any kernel and padding; inputs of fewer than 16 channels (a first layer on images, where
// im2col's GEMM would have a depth of kernel²·in_c, 25 for 5×5 grey) need a short window row.
#include "kernels/ops.h"

namespace starling::kernels {

/// Whether direct_conv and direct_conv_weight_gradient run this shape on this CPU: AVX2 or NEON,
/// stride 1, out_c a multiple of 16, and either in_c a multiple of 16 or a window row
/// (kernel·in_c) of 1, 3, 5, 7, 9 or 15 floats.
bool direct_conv_supported(const ConvShape& s);
/// Whether the input gradient runs as direct_conv(transposed(s), …): both shapes supported,
/// and "same" padding, which the flipped window keeps.
bool direct_input_gradient_supported(const ConvShape& s);
/// Floats of the zero-bordered input: batch·(in_h + 2·pad)·(in_w + 2·pad)·in_c.
long padded_size(const ConvShape& s);
/// xp = x inside a zero border s.pad wide on every side (overwrites all of xp).
void pad_input(const ConvShape& s, const float* x, float* xp);
/// y[batch, out_h, out_w, out_c] = conv(xp, w) + bias per channel (when not null), then ReLU
/// when relu; w is (kernel, kernel, in_c) × out_c, the im2col GEMM's layout. Needs
/// direct_conv_supported(s).
void direct_conv(const ConvShape& s, const float* xp, const float* w, const float* bias, bool relu, float* y);
/// The weight gradient dW[(kh, kw, c), o] = Σ over output pixels of the pixel's window of xp
/// at (kh, kw, c) times dy[pixel, o], in the layout its kernel tiles best, overwritten (added
/// to with `accumulate`): for in_c in 16s as dWᵀ (out_c × patch) in dwt, returning true; for
/// narrower inputs as dW (patch × out_c, the weights' layout) in dw, returning false.
bool direct_conv_weight_gradient(const ConvShape& s, const float* xp, const float* dy, float* dw, float* dwt,
                                 bool accumulate = false);
/// The weights of the input gradient: wf[(kh, kw, o), c] = w[(k−1−kh, k−1−kw, c), o], so
/// that dx = direct_conv(transposed(s), pad_input(dy), wf).
void flip_weights(const ConvShape& s, const float* w, float* wf);
/// The shape of the input-gradient convolution: in and out channels swapped.
ConvShape transposed(const ConvShape& s);

}  // namespace starling::kernels
