// Presets as layer lists with shapes, and their JSON export (learners/model_description.h).
#include "learners/model_description.h"

#include "learners/model.h"

#include <stdexcept>

namespace starling {
namespace {

using Kind = LayerDesc::Kind;

// Appends layers, each taking the previous one's output shape as its input.
class Builder {
 public:
  explicit Builder(Shape input) : shape_(input) {}

  void add(Kind kind, int size = 0, int kernel = 0, int stride = 1, int padding = 0) {
    LayerDesc d;
    d.kind = kind, d.size = size, d.kernel = kernel, d.stride = stride, d.padding = padding;
    add(d);
  }
  void add(LayerDesc d) {
    const int index = static_cast<int>(layers_.size());
    d.in = shape_;
    if (d.kind == Kind::residual) fill_residual(d, index);
    d.out = output_shape(d, index);
    layers_.push_back(std::move(d));
    shape_ = layers_.back().out;
  }
  Shape shape() const { return shape_; }
  std::vector<LayerDesc> take() { return std::move(layers_); }

 private:
  // A sub-list's shapes, its errors named inside this layer: "body[2].size".
  static std::vector<LayerDesc> nested(const std::vector<LayerDesc>& list, Shape in, const char* name, int index) {
    Builder b(in);
    for (std::size_t i = 0; i < list.size(); ++i) {
      try {
        b.add(list[i]);
      } catch (const ModelError& e) {
        throw ModelError(index, std::string(name) + "[" + std::to_string(i) + "]." + e.key(), e.what());
      }
    }
    return b.take();
  }
  static Shape chain_out(const std::vector<LayerDesc>& list, Shape in) { return list.empty() ? in : list.back().out; }

  static void fill_residual(LayerDesc& d, int index) {
    if (d.body.empty()) throw ModelError(index, "body", "residual: the body is empty");
    d.body = nested(d.body, d.in, "body", index);
    d.shortcut = nested(d.shortcut, d.in, "shortcut", index);
    const Shape a = chain_out(d.body, d.in), b = chain_out(d.shortcut, d.in);
    if (!(a == b))
      throw ModelError(index, "shortcut", "residual: the body gives " + shape_text(a) + " but the shortcut " +
                                              shape_text(b) + (d.shortcut.empty() ? " (add a projection shortcut)" : ""));
  }
  static std::string shape_text(Shape s) {
    return std::to_string(s.h) + "x" + std::to_string(s.w) + "x" + std::to_string(s.c);
  }
  static int slide(int extent, const LayerDesc& d, int index) {
    const int room = extent + 2 * d.padding - d.kernel;
    if (room < 0)
      throw ModelError(index, "kernel", std::string(layer_kind_name(d.kind)) + ": a window of " + std::to_string(d.kernel) +
                                            " is larger than its input of " + std::to_string(extent) + " (plus padding)");
    return room / d.stride + 1;
  }
  static void check_sizes(const LayerDesc& d, int index) {
    const std::string name = layer_kind_name(d.kind);
    const bool sized = d.kind == Kind::dense || d.kind == Kind::conv2d;
    const bool windowed = d.kind == Kind::conv2d || d.kind == Kind::maxpool2d || d.kind == Kind::avgpool2d;
    if (sized && d.size < 1) throw ModelError(index, "size", name + ": size must be positive");
    if (windowed && d.kernel < 1) throw ModelError(index, "kernel", name + ": kernel must be positive");
    if (windowed && d.stride < 1) throw ModelError(index, "stride", name + ": stride must be positive");
    if (windowed && (d.padding < 0 || d.padding >= d.kernel))
      throw ModelError(index, "padding", name + ": padding must be in [0, kernel)");
    if (d.kind == Kind::dropout && !(d.rate >= 0.0 && d.rate < 1.0))
      throw ModelError(index, "rate", name + ": rate must be in [0, 1)");
    if (d.kind == Kind::groupnorm && (d.groups < 1 || d.in.c % d.groups != 0))
      throw ModelError(index, "groups", name + ": " + std::to_string(d.groups) + " groups do not divide " +
                                            std::to_string(d.in.c) + " channels");
  }
  static Shape output_shape(const LayerDesc& d, int index) {
    check_sizes(d, index);
    switch (d.kind) {
      case Kind::dense: return {1, 1, d.size};
      case Kind::conv2d: return {slide(d.in.h, d, index), slide(d.in.w, d, index), d.size};
      case Kind::maxpool2d:
      case Kind::avgpool2d: return {slide(d.in.h, d, index), slide(d.in.w, d, index), d.in.c};
      case Kind::flatten: return {1, 1, static_cast<int>(d.in.size())};
      case Kind::global_avgpool: return {1, 1, d.in.c};
      case Kind::residual: return chain_out(d.body, d.in);
      case Kind::relu:
      case Kind::groupnorm:
      case Kind::dropout: break;
    }
    return d.in;
  }

  Shape shape_;
  std::vector<LayerDesc> layers_;
};

std::vector<LayerDesc> listed(const ModelSpec& spec) {
  if (spec.layers.empty()) throw ModelError(-1, "layers", "model.layers is empty");
  Builder b(spec.input);
  for (const LayerDesc& d : spec.layers) b.add(d);
  return b.take();
}

std::vector<LayerDesc> mlp(const ModelSpec& spec) {
  Builder b(spec.input);
  if (spec.input.h != 1 || spec.input.w != 1) b.add(Kind::flatten);
  for (int h : spec.hidden) {
    b.add(Kind::dense, h);
    b.add(Kind::relu);
  }
  b.add(Kind::dense, spec.classes);
  return b.take();
}

// conv 5×5×32 → ReLU → maxpool 2 → conv 5×5×64 → ReLU → maxpool 2 → dense 128 → ReLU → dense classes
std::vector<LayerDesc> cnn(const ModelSpec& spec) {
  Builder b(spec.input);
  for (int channels : {32, 64}) {
    b.add(Kind::conv2d, channels, 5);
    b.add(Kind::relu);
    b.add(Kind::maxpool2d, 0, 2, 2);
  }
  b.add(Kind::flatten);
  b.add(Kind::dense, 128);
  b.add(Kind::relu);
  b.add(Kind::dense, spec.classes);
  return b.take();
}

LayerDesc conv(int channels, int kernel, int stride, int padding) {
  LayerDesc d;
  d.kind = Kind::conv2d, d.size = channels, d.kernel = kernel, d.stride = stride, d.padding = padding;
  d.bias = false;  // a GroupNorm follows, which would cancel it
  return d;
}

LayerDesc group_norm(int groups) {
  LayerDesc d;
  d.kind = Kind::groupnorm, d.groups = groups;
  return d;
}

LayerDesc relu() { return LayerDesc{}; }

// conv3×3 → GN → ReLU → conv3×3 → GN, plus the identity or a 1×1 conv + GN projection where
// the shape changes; the ReLU after the sum is the list's next layer.
LayerDesc basic_block(int in_channels, int channels, int stride) {
  LayerDesc d;
  d.kind = Kind::residual;
  d.body = {conv(channels, 3, stride, 1), group_norm(8), relu(), conv(channels, 3, 1, 1), group_norm(8)};
  if (stride != 1 || in_channels != channels) d.shortcut = {conv(channels, 1, stride, 0), group_norm(8)};
  return d;
}

// stem conv3×3×16 + GN + ReLU; basic blocks 16→16, 16→32 /2, 32→64 /2; global average pool;
// dense 64→classes.
std::vector<LayerDesc> resnet8(const ModelSpec& spec) {
  Builder b(spec.input);
  b.add(conv(16, 3, 1, 1));
  b.add(group_norm(8));
  b.add(relu());
  const int widths[][3] = {{16, 16, 1}, {16, 32, 2}, {32, 64, 2}};
  for (const auto& w : widths) {
    b.add(basic_block(w[0], w[1], w[2]));
    b.add(relu());
  }
  b.add(Kind::global_avgpool);
  b.add(Kind::dense, spec.classes);
  return b.take();
}

std::string shape_json(Shape s) {
  return "[" + std::to_string(s.h) + ", " + std::to_string(s.w) + ", " + std::to_string(s.c) + "]";
}

std::string layers_json(const std::vector<LayerDesc>& layers, const std::string& indent);

std::string layer_json(const LayerDesc& d, const std::string& indent) {
  std::string out = "{\"kind\": \"" + std::string(layer_kind_name(d.kind)) + "\", \"in\": " + shape_json(d.in) +
                    ", \"out\": " + shape_json(d.out);
  if (d.kind == Kind::dense || d.kind == Kind::conv2d) out += ", \"size\": " + std::to_string(d.size);
  if (d.kind == Kind::conv2d || d.kind == Kind::maxpool2d || d.kind == Kind::avgpool2d)
    out += ", \"kernel\": " + std::to_string(d.kernel) + ", \"stride\": " + std::to_string(d.stride) +
           ", \"padding\": " + std::to_string(d.padding);
  if (d.kind == Kind::conv2d) out += std::string(", \"bias\": ") + (d.bias ? "true" : "false");
  if (d.kind == Kind::groupnorm) out += ", \"groups\": " + std::to_string(d.groups);
  if (d.kind == Kind::dropout) out += ", \"rate\": " + std::to_string(d.rate);
  if (d.kind == Kind::residual)
    out += ", \"body\": " + layers_json(d.body, indent + "  ") + ", \"shortcut\": " + layers_json(d.shortcut, indent + "  ");
  return out + "}";
}

std::string layers_json(const std::vector<LayerDesc>& layers, const std::string& indent) {
  std::string out = "[";
  for (std::size_t i = 0; i < layers.size(); ++i) out += (i ? ",\n" : "\n") + indent + layer_json(layers[i], indent);
  return out + (layers.empty() ? "]" : "\n" + indent.substr(2) + "]");
}

}  // namespace

const char* layer_kind_name(LayerDesc::Kind kind) {
  static const char* const names[] = {"dense",     "conv2d",         "maxpool2d", "relu",      "flatten",
                                      "groupnorm", "global_avgpool", "residual",  "avgpool2d", "dropout"};
  static_assert(sizeof names / sizeof names[0] == kLayerKinds && static_cast<int>(Kind::dropout) + 1 == kLayerKinds,
                "one name per kind");
  return names[static_cast<int>(kind)];
}

std::vector<LayerDesc> describe_model(const ModelSpec& spec) {
  if (spec.classes < 2) throw ModelError(-1, "", "model: need at least 2 classes");
  std::vector<LayerDesc> layers;
  if (spec.kind == "mlp") layers = mlp(spec);
  else if (spec.kind == "cnn") layers = cnn(spec);
  else if (spec.kind == "resnet8") layers = resnet8(spec);
  else if (spec.kind == "layers") layers = listed(spec);
  else if (spec.kind == "gpt") throw ModelError(-1, "kind", "model: \"gpt\" is built by make_gpt, not described as a layer list");
  else throw ModelError(-1, "kind", "model: unknown kind '" + spec.kind + "' (expected mlp, cnn, resnet8 or layers)");
  const LayerDesc& last = layers.back();
  if (last.out.h != 1 || last.out.w != 1 || last.out.c != spec.classes)
    throw ModelError(static_cast<int>(layers.size()) - 1, last.kind == Kind::dense ? "size" : "kind",
                     "model: the last layer gives " + std::to_string(last.out.size()) + " values per sample, not one per class (" +
                         std::to_string(spec.classes) + ")");
  return layers;
}

std::string model_json(const ModelSpec& spec) {
  if (spec.kind == "gpt")  // nanoGPT's architecture is fixed by its sizes (learners/gpt.h)
    return "{\"kind\": \"gpt\", \"blocks\": " + std::to_string(spec.blocks) + ", \"heads\": " + std::to_string(spec.heads) +
           ", \"width\": " + std::to_string(spec.width) + ", \"context\": " + std::to_string(spec.context) +
           ", \"vocab\": " + std::to_string(spec.classes) + ", \"bias\": true, \"tied_head\": true" +
           ", \"parameters\": " + std::to_string(Model(spec).trainable_count()) + "}";
  const std::vector<LayerDesc> layers = describe_model(spec);
  std::string out = "{\"kind\": \"" + spec.kind + "\", \"input\": " + shape_json(spec.input) +
                    ", \"classes\": " + std::to_string(spec.classes) +
                    ", \"parameters\": " + std::to_string(Model(spec).trainable_count()) + ", \"layers\": ";
  return out + layers_json(layers, "  ") + "}";
}

}  // namespace starling
