// Layer "conv2d": `size` output channels from a `kernel`×`kernel` window moved by `stride`
// over the input padded by `padding`, with a bias unless `bias = false`.
#include "learners/layer_rows/window.h"
#include "learners/layers/conv2d.h"

#include <sstream>

namespace starling::layer_kinds {
namespace {

constexpr LayerKey kKeys[] = {
    integer_key("size", LayerKey::kRequired, 1, 1 << 20, "the layer's output channels"),
    kKernel,
    integer_key("stride", 1, 1, 1024),
    integer_key("padding", 0, 0, 1024),
    flag_key("bias", true),
};

Shape shape(LayerDesc& d, DescribeContext& context) {
  const int padding = d.integer("padding");
  if (padding >= d.integer("kernel")) context.fail("padding", "conv2d: padding must be in [0, kernel)");
  return {slide(d.in.h, d, padding, context), slide(d.in.w, d, padding, context), d.integer("size")};
}

void make(const LayerDesc& d, LayerBuild&, Layers& out) {
  out.push_back(std::make_unique<Conv2D>(d.in, d.integer("size"), d.integer("kernel"), d.integer("stride"),
                                         d.integer("padding"), d.flag("bias")));
}

double parameters(const LayerDesc& d) {
  const double kernel = d.integer("kernel"), size = d.integer("size");
  return kernel * kernel * d.in.c * size + (d.flag("bias") ? size : 0);
}

std::string what(const LayerDesc& d) {
  std::ostringstream s;
  s << "conv2d of " << d.integer("size") << " channels on " << d.in.h << "×" << d.in.w << "×" << d.in.c;
  return s.str();
}

template <std::string (*key)(std::string_view, const std::string&)>
std::string keys(const LayerDesc& d) {
  std::string out;
  for (const char* name : {"size", "kernel", "stride", "padding"}) out += key(name, std::to_string(d.integer(name)));
  return out + key("bias", flag_text(d.flag("bias")));
}

constexpr LayerRow row() {
  LayerRow r;
  r.name = "conv2d";
  r.shape = &shape, r.make = &make, r.parameters = &parameters, r.what = &what;
  r.json = &keys<json_key>, r.toml = &keys<toml_key>;
  r.label = [](const LayerDesc& d) { return std::string(d.flag("bias") ? "" : " nobias"); };
  return with_keys(r, kKeys);
}

}  // namespace

extern constexpr LayerRow conv2d_row = row();

}  // namespace starling::layer_kinds
