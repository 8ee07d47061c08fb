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
    add(LayerDesc{kind, size, kernel, stride, padding, {}, {}});
  }
  void add(LayerDesc d) {
    d.in = shape_;
    d.out = output_shape(d, static_cast<int>(layers_.size()));
    layers_.push_back(d);
    shape_ = d.out;
  }
  std::vector<LayerDesc> take() { return std::move(layers_); }

 private:
  static int slide(int extent, const LayerDesc& d, int index) {
    const int room = extent + 2 * d.padding - d.kernel;
    if (room < 0)
      throw ModelError(index, "kernel", std::string(layer_kind_name(d.kind)) + ": a window of " + std::to_string(d.kernel) +
                                            " is larger than its input of " + std::to_string(extent) + " (plus padding)");
    return room / d.stride + 1;
  }
  static Shape output_shape(const LayerDesc& d, int index) {
    const bool sized = d.kind == Kind::dense || d.kind == Kind::conv2d;
    const bool windowed = d.kind == Kind::conv2d || d.kind == Kind::maxpool2d;
    if (sized && d.size < 1) throw ModelError(index, "size", std::string(layer_kind_name(d.kind)) + ": size must be positive");
    if (windowed && d.kernel < 1) throw ModelError(index, "kernel", std::string(layer_kind_name(d.kind)) + ": kernel must be positive");
    if (windowed && d.stride < 1) throw ModelError(index, "stride", std::string(layer_kind_name(d.kind)) + ": stride must be positive");
    if (windowed && (d.padding < 0 || d.padding >= d.kernel))
      throw ModelError(index, "padding", std::string(layer_kind_name(d.kind)) + ": padding must be in [0, kernel)");
    switch (d.kind) {
      case Kind::dense: return {1, 1, d.size};
      case Kind::conv2d: return {slide(d.in.h, d, index), slide(d.in.w, d, index), d.size};
      case Kind::maxpool2d: return {slide(d.in.h, d, index), slide(d.in.w, d, index), d.in.c};
      case Kind::flatten: return {1, 1, static_cast<int>(d.in.size())};
      case Kind::relu: break;
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

std::string shape_json(Shape s) {
  return "[" + std::to_string(s.h) + ", " + std::to_string(s.w) + ", " + std::to_string(s.c) + "]";
}

std::string layer_json(const LayerDesc& d) {
  std::string out = "{\"kind\": \"" + std::string(layer_kind_name(d.kind)) + "\", \"in\": " + shape_json(d.in) +
                    ", \"out\": " + shape_json(d.out);
  if (d.kind == Kind::dense || d.kind == Kind::conv2d) out += ", \"size\": " + std::to_string(d.size);
  if (d.kind == Kind::conv2d || d.kind == Kind::maxpool2d)
    out += ", \"kernel\": " + std::to_string(d.kernel) + ", \"stride\": " + std::to_string(d.stride) +
           ", \"padding\": " + std::to_string(d.padding);
  return out + "}";
}

}  // namespace

const char* layer_kind_name(LayerDesc::Kind kind) {
  static const char* const names[] = {"dense", "conv2d", "maxpool2d", "relu", "flatten"};
  static_assert(sizeof names / sizeof names[0] == kLayerKinds && static_cast<int>(Kind::flatten) + 1 == kLayerKinds,
                "one name per kind");
  return names[static_cast<int>(kind)];
}

std::vector<LayerDesc> describe_model(const ModelSpec& spec) {
  if (spec.classes < 2) throw ModelError(-1, "", "model: need at least 2 classes");
  std::vector<LayerDesc> layers;
  if (spec.kind == "mlp") layers = mlp(spec);
  else if (spec.kind == "cnn") layers = cnn(spec);
  else if (spec.kind == "layers") layers = listed(spec);
  else throw ModelError(-1, "kind", "model: unknown kind '" + spec.kind + "' (expected mlp, cnn or layers)");
  const LayerDesc& last = layers.back();
  if (last.out.h != 1 || last.out.w != 1 || last.out.c != spec.classes)
    throw ModelError(static_cast<int>(layers.size()) - 1, last.kind == Kind::dense ? "size" : "kind",
                     "model: the last layer gives " + std::to_string(last.out.size()) + " values per sample, not one per class (" +
                         std::to_string(spec.classes) + ")");
  return layers;
}

std::string model_json(const ModelSpec& spec) {
  const std::vector<LayerDesc> layers = describe_model(spec);
  std::string out = "{\"kind\": \"" + spec.kind + "\", \"input\": " + shape_json(spec.input) +
                    ", \"classes\": " + std::to_string(spec.classes) +
                    ", \"parameters\": " + std::to_string(Model(spec).trainable_count()) + ", \"layers\": [";
  for (std::size_t i = 0; i < layers.size(); ++i) out += (i ? ",\n  " : "\n  ") + layer_json(layers[i]);
  return out + "\n]}";
}

}  // namespace starling
