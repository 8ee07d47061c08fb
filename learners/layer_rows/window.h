#pragma once
// What the rows of windowed layers (conv2d, maxpool2d, avgpool2d) share: the positions a
// window slides to, and the table's columns.
#include "learners/models/layer_row.h"

namespace starling::layer_kinds {

/// The positions a window of `kernel` slides to along `extent` (padded by `padding` at each
/// end) in steps of `stride`; a ModelError at "kernel" when the window does not fit.
inline int slide(int extent, const LayerDesc& d, int padding, const DescribeContext& context) {
  const int kernel = d.integer("kernel"), room = extent + 2 * padding - kernel;
  if (room < 0)
    context.fail("kernel", std::string(d.kind()) + ": a window of " + std::to_string(kernel) +
                               " is larger than its input of " + std::to_string(extent) + " (plus padding)");
  return room / d.integer("stride") + 1;
}

/// A window's side and step, as the config takes them: kernel = K, stride = K unless given.
inline constexpr LayerKey kKernel = integer_key("kernel", LayerKey::kRequired, 1, 1024, "the window's side");
inline constexpr LayerKey kPoolStride = [] {
  LayerKey k = integer_key("stride", 0, 1, 1024);
  k.fallback_from = "kernel";
  return k;
}();

}  // namespace starling::layer_kinds
