// Presets as layer lists with shapes (learners/models/model_description.h).
#include "learners/models/model_description.h"

#include "learners/models/gpt.h"

#include <initializer_list>
#include <stdexcept>

namespace starling {
namespace {

// A layer of the kind named with integer options, in order.
LayerDesc layer(std::string_view kind, std::initializer_list<std::pair<const char*, double>> options = {}) {
  LayerDesc d = layer_of(kind);
  for (const auto& option : options) d.set(option.first, option.second);
  return d;
}

// Appends layers, each taking the previous one's output shape as its input.
class Builder final : public DescribeContext {
 public:
  /// `vocab`: a token embedding's vocabulary where the list leaves it 0.
  Builder(Shape input, int vocab) : shape_(input) { data_vocab = vocab; }

  void add(LayerDesc d) {
    index = static_cast<int>(layers_.size());
    if (!d.row) fail("kind", "model: a layer without a kind");
    d.in = shape_;
    check_keys(d);
    d.out = d.row->shape(d, *this);
    layers_.push_back(std::move(d));
    shape_ = layers_.back().out;
  }
  Shape shape() const { return shape_; }
  std::vector<LayerDesc> take() { return std::move(layers_); }

  // A sub-list's shapes, its errors named inside this layer: "body[2].size". A token
  // embedding inside it is the one a later tied head ties to.
  std::vector<LayerDesc> nested(const std::vector<LayerDesc>& list, Shape in, const char* name) override {
    Builder b(in, data_vocab);
    b.embedding_vocab = embedding_vocab, b.embedding_width = embedding_width;
    for (std::size_t i = 0; i < list.size(); ++i) {
      try {
        b.add(list[i]);
      } catch (const ModelError& e) {
        throw ModelError(index, std::string(name) + "[" + std::to_string(i) + "]." + e.key(), e.what());
      }
    }
    embedding_vocab = b.embedding_vocab, embedding_width = b.embedding_width;
    return b.take();
  }

 private:
  // Every key the row requires is set, and every key set is in its range.
  void check_keys(const LayerDesc& d) const {
    const std::string name(d.kind());
    for (std::size_t k = 0; k < d.row->key_count; ++k) {
      const LayerKey& key = d.row->keys[k];
      if (!d.has(key.name)) {
        if (key.required()) fail(std::string(key.name), name + ": " + std::string(key.name) + " must be set (" + std::string(key.what) + ")");
        continue;
      }
      const double value = d.value(key.name);
      if (!key.allows(value))
        fail(std::string(key.name), name + ": " + std::string(key.name) + " must be " + key.range() + ", not " + number_text(value, false));
    }
  }

  Shape shape_;
  std::vector<LayerDesc> layers_;
};

std::vector<LayerDesc> listed(const ModelSpec& spec) {
  if (spec.layers.empty()) throw ModelError(-1, "layers", "model.layers is empty");
  return with_shapes(spec.layers, spec.input, spec.classes);
}

std::vector<LayerDesc> mlp(const ModelSpec& spec) {
  Builder b(spec.input, spec.classes);
  if (spec.input.h != 1 || spec.input.w != 1) b.add(layer("flatten"));
  for (int h : spec.hidden) {
    b.add(layer("dense", {{"size", h}}));
    b.add(layer("relu"));
  }
  b.add(layer("dense", {{"size", spec.classes}}));
  return b.take();
}

// conv 5×5×32 → ReLU → maxpool 2 → conv 5×5×64 → ReLU → maxpool 2 → dense 128 → ReLU → dense classes
std::vector<LayerDesc> cnn(const ModelSpec& spec) {
  Builder b(spec.input, spec.classes);
  for (int channels : {32, 64}) {
    b.add(layer("conv2d", {{"size", channels}, {"kernel", 5}, {"stride", 1}}));
    b.add(layer("relu"));
    b.add(layer("maxpool2d", {{"kernel", 2}, {"stride", 2}}));
  }
  b.add(layer("flatten"));
  b.add(layer("dense", {{"size", 128}}));
  b.add(layer("relu"));
  b.add(layer("dense", {{"size", spec.classes}}));
  return b.take();
}

LayerDesc conv(int channels, int kernel, int stride, int padding) {
  // No bias: a GroupNorm follows, which would cancel it.
  return layer("conv2d", {{"size", channels}, {"kernel", kernel}, {"stride", stride}, {"padding", padding}, {"bias", 0}});
}

LayerDesc group_norm(int groups) { return layer("groupnorm", {{"groups", groups}}); }

// conv3×3 → GN → ReLU → conv3×3 → GN, plus the identity or a 1×1 conv + GN projection where
// the shape changes; the ReLU after the sum is the list's next layer.
LayerDesc basic_block(int in_channels, int channels, int stride) {
  LayerDesc d = layer("residual");
  d.body = {conv(channels, 3, stride, 1), group_norm(8), layer("relu"), conv(channels, 3, 1, 1), group_norm(8)};
  if (stride != 1 || in_channels != channels) d.shortcut = {conv(channels, 1, stride, 0), group_norm(8)};
  return d;
}

// stem conv3×3×16 + GN + ReLU; basic blocks 16→16, 16→32 /2, 32→64 /2; global average pool;
// dense 64→classes.
std::vector<LayerDesc> resnet8(const ModelSpec& spec) {
  Builder b(spec.input, spec.classes);
  b.add(conv(16, 3, 1, 1));
  b.add(group_norm(8));
  b.add(layer("relu"));
  const int widths[][3] = {{16, 16, 1}, {16, 32, 2}, {32, 64, 2}};
  for (const auto& w : widths) {
    b.add(basic_block(w[0], w[1], w[2]));
    b.add(layer("relu"));
  }
  b.add(layer("global_avgpool"));
  b.add(layer("dense", {{"size", spec.classes}}));
  return b.take();
}

std::vector<LayerDesc> gpt(const ModelSpec& spec) {
  return with_shapes(gpt_description(gpt_spec(spec)), Shape{1, spec.context, 1}, spec.classes);
}

std::string gpt_sizes(const ModelSpec& spec) {
  return ", \"blocks\": " + std::to_string(spec.blocks) + ", \"heads\": " + std::to_string(spec.heads) +
         ", \"width\": " + std::to_string(spec.width) + ", \"bias\": true, \"tied_head\": true" +
         (spec.mlp == "gelu" ? "" : ", \"mlp\": \"" + spec.mlp + "\"");
}

std::string gpt_heading(const ModelSpec& spec) {
  return "gpt: " + std::to_string(spec.blocks) + " blocks, " + std::to_string(spec.heads) + " heads, width " +
         std::to_string(spec.width) + ", context " + std::to_string(spec.context) + ", vocabulary " +
         std::to_string(spec.classes) + (spec.mlp == "gelu" ? "" : ", " + spec.mlp + " MLP");
}

const ModelKind kModelKinds[] = {
    {"mlp", &mlp, true, false, nullptr, nullptr},
    {"cnn", &cnn, true, false, nullptr, nullptr},
    {"resnet8", &resnet8, true, false, nullptr, nullptr},
    {kGptKind, &gpt, true, true, &gpt_sizes, &gpt_heading},
    {kLayerListKind, &listed, false, false, nullptr, nullptr},
};

}  // namespace

std::vector<LayerDesc> describe_model(const ModelSpec& spec) {
  if (spec.classes < 2) throw ModelError(-1, "", "model: need at least 2 classes");
  const ModelKind* kind = model_kind(spec.kind);
  if (!kind) {
    std::string names;
    for (const ModelKind& k : kModelKinds) names += std::string(names.empty() ? "" : ", ") + k.name;
    throw ModelError(-1, "kind", "model: unknown kind '" + spec.kind + "' (expected one of " + names + ")");
  }
  const std::vector<LayerDesc> layers = kind->layers(spec);
  const LayerDesc& last = layers.back();
  const bool per_token = is_language_model(layers);
  const Shape expected{1, per_token ? layers.front().in.w : 1, spec.classes};
  if (!(last.out == expected))
    throw ModelError(static_cast<int>(layers.size()) - 1, last.kind() == "dense" ? "size" : "kind",
                     "model: the last layer gives " + std::to_string(last.out.size()) + " values per sample, not one per class (" +
                         std::to_string(spec.classes) + ")" + (per_token ? " at each of " + std::to_string(expected.w) + " tokens" : ""));
  return layers;
}

std::vector<LayerDesc> with_shapes(const std::vector<LayerDesc>& layers, Shape input, int vocab) {
  Builder b(input, vocab);
  for (const LayerDesc& d : layers) b.add(d);
  return b.take();
}

bool is_language_model(const std::vector<LayerDesc>& layers) {
  return !layers.empty() && layers.front().kind() == "token_embedding";
}

bool is_language_model(const ModelSpec& spec) {
  const ModelKind* kind = model_kind(spec.kind);
  return kind && (kind->language_model || (is_layer_list(spec) && is_language_model(spec.layers)));
}

const ModelKind* model_kind(const std::string& name) {
  for (const ModelKind& kind : kModelKinds)
    if (name == kind.name) return &kind;
  return nullptr;
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const ModelKind& kind : kModelKinds)
    if (kind.preset) names.emplace_back(kind.name);
  return names;
}

bool is_layer_list(const ModelSpec& spec) { return spec.kind == kLayerListKind; }

}  // namespace starling
