#pragma once
// A pooling row (maxpool2d, avgpool2d): a window of `kernel` moved by `stride`, no padding,
// over each channel; only the layer it makes differs.
#include "learners/layer_rows/window.h"

namespace starling::layer_kinds {

inline Shape pool_shape(LayerDesc& d, DescribeContext& context) {
  return {slide(d.in.h, d, 0, context), slide(d.in.w, d, 0, context), d.in.c};
}

inline std::string pool_json(const LayerDesc& d) {
  return json_key("kernel", std::to_string(d.integer("kernel"))) + json_key("stride", std::to_string(d.integer("stride"))) +
         json_key("padding", "0");
}

inline std::string pool_toml(const LayerDesc& d) {
  return toml_key("kernel", std::to_string(d.integer("kernel"))) + toml_key("stride", std::to_string(d.integer("stride")));
}

inline constexpr LayerKey kPoolKeys[] = {kKernel, kPoolStride};

/// The row of a pool that makes `Pool`.
template <typename Pool>
constexpr LayerRow pool_row(std::string_view name) {
  LayerRow row;
  row.name = name;
  row.shape = &pool_shape;
  row.make = [](const LayerDesc& d, LayerBuild&, Layers& out) {
    out.push_back(std::make_unique<Pool>(d.in, d.integer("kernel"), d.integer("stride")));
  };
  row.json = &pool_json;
  row.toml = &pool_toml;
  return with_keys(row, kPoolKeys);
}

}  // namespace starling::layer_kinds
