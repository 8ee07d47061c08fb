// Presets as layer lists with shapes, and their JSON export (learners/model_description.h).
#include "learners/model_description.h"

#include "learners/gpt.h"
#include "learners/model.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace starling {
namespace {

using Kind = LayerDesc::Kind;

// Appends layers, each taking the previous one's output shape as its input.
class Builder {
 public:
  /// `vocab`: a token embedding's vocabulary where the list leaves it 0.
  Builder(Shape input, int vocab) : shape_(input), vocab_(vocab) {}

  void add(Kind kind, int size = 0, int kernel = 0, int stride = 1, int padding = 0) {
    LayerDesc d;
    d.kind = kind, d.size = size, d.kernel = kernel, d.stride = stride, d.padding = padding;
    add(d);
  }
  void add(LayerDesc d) {
    const int index = static_cast<int>(layers_.size());
    d.in = shape_;
    if (d.kind == Kind::residual) fill_residual(d, index);
    if (d.kind == Kind::token_embedding) embed(d, index);
    if (d.kind == Kind::tied_head) tie(d, index);
    d.out = output_shape(d, index);
    layers_.push_back(std::move(d));
    shape_ = layers_.back().out;
  }
  Shape shape() const { return shape_; }
  std::vector<LayerDesc> take() { return std::move(layers_); }

 private:
  // A sub-list's shapes, its errors named inside this layer: "body[2].size". A token
  // embedding inside it is the one a later tied head ties to.
  std::vector<LayerDesc> nested(const std::vector<LayerDesc>& list, Shape in, const char* name, int index) {
    Builder b(in, vocab_);
    b.embedding_vocab_ = embedding_vocab_, b.embedding_width_ = embedding_width_;
    for (std::size_t i = 0; i < list.size(); ++i) {
      try {
        b.add(list[i]);
      } catch (const ModelError& e) {
        throw ModelError(index, std::string(name) + "[" + std::to_string(i) + "]." + e.key(), e.what());
      }
    }
    embedding_vocab_ = b.embedding_vocab_, embedding_width_ = b.embedding_width_;
    return b.take();
  }
  static Shape chain_out(const std::vector<LayerDesc>& list, Shape in) { return list.empty() ? in : list.back().out; }

  void fill_residual(LayerDesc& d, int index) {
    if (d.body.empty()) throw ModelError(index, "body", "residual: the body is empty");
    d.body = nested(d.body, d.in, "body", index);
    d.shortcut = nested(d.shortcut, d.in, "shortcut", index);
    const Shape a = chain_out(d.body, d.in), b = chain_out(d.shortcut, d.in);
    if (!(a == b))
      throw ModelError(index, "shortcut", "residual: the body gives " + shape_text(a) + " but the shortcut " +
                                              shape_text(b) + (d.shortcut.empty() ? " (add a projection shortcut)" : ""));
  }
  // The vocabulary is the data's: a list may only repeat it. The first embedding is the one
  // a tied head ties to.
  void embed(LayerDesc& d, int index) {
    if (d.vocab == 0) d.vocab = vocab_;
    if (d.vocab != vocab_)
      throw ModelError(index, "vocab", "token_embedding: a vocabulary of " + std::to_string(d.vocab) +
                                           " tokens, but the data has " + std::to_string(vocab_));
    if (d.in.h != 1 || d.in.c != 1)
      throw ModelError(index, "kind", "token_embedding: its input " + shape_text(d.in) + " is not a sequence of token ids (1xTx1)");
    if (embedding_vocab_ == 0) embedding_vocab_ = d.vocab, embedding_width_ = d.size;
  }
  // A tied head reads the first embedding's [vocab × width]: its tokens must be that wide.
  void tie(LayerDesc& d, int index) const {
    if (embedding_vocab_ == 0) throw ModelError(index, "kind", "tied_head: no token_embedding before it to tie to");
    if (d.in.c != embedding_width_)
      throw ModelError(index, "kind", "tied_head: its tokens are " + std::to_string(d.in.c) + " wide, the token_embedding it ties to " +
                                          std::to_string(embedding_width_));
    d.vocab = embedding_vocab_;
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
  // The sequence layers take {1, T, C} from a token embedding: not an image, not ids.
  void check_sequence(const LayerDesc& d, int index) const {
    const bool sequence = d.kind == Kind::position_embedding || d.kind == Kind::attention || d.kind == Kind::tied_head ||
                          (d.kind == Kind::dense && d.per_token);
    if (sequence && (embedding_vocab_ == 0 || d.in.h != 1))
      throw ModelError(index, "kind", std::string(layer_kind_name(d.kind)) + (d.per_token ? " per_token" : "") + ": its input " +
                                          shape_text(d.in) + " is not a token sequence (put a token_embedding before it)");
  }
  void check_sizes(const LayerDesc& d, int index) const {
    const std::string name = layer_kind_name(d.kind);
    const bool sized = d.kind == Kind::dense || d.kind == Kind::conv2d || d.kind == Kind::token_embedding;
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
    check_sequence(d, index);
    if (d.kind == Kind::attention && (d.heads < 1 || d.in.c % d.heads != 0))
      throw ModelError(index, "heads", name + ": " + std::to_string(d.heads) + " heads do not divide the width " +
                                           std::to_string(d.in.c));
  }
  Shape output_shape(const LayerDesc& d, int index) const {
    check_sizes(d, index);
    switch (d.kind) {
      case Kind::dense: return d.per_token ? Shape{1, d.in.w, d.size} : Shape{1, 1, d.size};
      case Kind::conv2d: return {slide(d.in.h, d, index), slide(d.in.w, d, index), d.size};
      case Kind::maxpool2d:
      case Kind::avgpool2d: return {slide(d.in.h, d, index), slide(d.in.w, d, index), d.in.c};
      case Kind::flatten: return {1, 1, static_cast<int>(d.in.size())};
      case Kind::global_avgpool: return {1, 1, d.in.c};
      case Kind::residual: return chain_out(d.body, d.in);
      case Kind::token_embedding: return {1, d.in.w, d.size};
      case Kind::tied_head: return {1, d.in.w, d.vocab};
      case Kind::relu:
      case Kind::groupnorm:
      case Kind::dropout:
      case Kind::position_embedding:
      case Kind::layernorm:
      case Kind::rmsnorm:
      case Kind::attention:
      case Kind::gelu: break;
    }
    return d.in;
  }

  Shape shape_;
  int vocab_;
  int embedding_vocab_ = 0, embedding_width_ = 0;  // the first token embedding's; 0 before one
  std::vector<LayerDesc> layers_;
};

std::vector<LayerDesc> listed(const ModelSpec& spec) {
  if (spec.layers.empty()) throw ModelError(-1, "layers", "model.layers is empty");
  return with_shapes(spec.layers, spec.input, spec.classes);
}

std::vector<LayerDesc> mlp(const ModelSpec& spec) {
  Builder b(spec.input, spec.classes);
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
  Builder b(spec.input, spec.classes);
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
  Builder b(spec.input, spec.classes);
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

// The shortest decimal that reads back as the same value (a float's, for `single`), with a
// decimal point (TOML and JSON both read it as a number): a written list rebuilds the same
// initial weights and dropout masks.
std::string number_text(double value, bool single) {
  char text[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, value);
    if (single ? std::strtof(text, nullptr) == static_cast<float>(value) : std::strtod(text, nullptr) == value) break;
  }
  std::string out = text;
  return out.find_first_of(".e") == std::string::npos ? out + ".0" : out;
}
std::string float_text(float value) { return number_text(value, true); }

std::string shape_json(Shape s) {
  return "[" + std::to_string(s.h) + ", " + std::to_string(s.w) + ", " + std::to_string(s.c) + "]";
}

std::string layers_json(const std::vector<LayerDesc>& layers, const std::string& indent);

std::string layer_json(const LayerDesc& d, const std::string& indent) {
  std::string out = "{\"kind\": \"" + std::string(layer_kind_name(d.kind)) + "\", \"in\": " + shape_json(d.in) +
                    ", \"out\": " + shape_json(d.out);
  if (d.kind == Kind::dense || d.kind == Kind::conv2d || d.kind == Kind::token_embedding)
    out += ", \"size\": " + std::to_string(d.size);
  if (d.kind == Kind::token_embedding || d.kind == Kind::tied_head) out += ", \"vocab\": " + std::to_string(d.vocab);
  if (d.kind == Kind::dense && d.per_token) out += ", \"per_token\": true, \"init_std\": " + float_text(d.init_std);
  if (d.kind == Kind::attention)
    out += ", \"heads\": " + std::to_string(d.heads) + ", \"init_std\": " + float_text(d.init_std) +
           ", \"projection_std\": " + float_text(d.projection_std);
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

// One [[name]] table with the keys its kind takes, its body and shortcut as sub-tables after
// them (TOML puts a table's keys before its sub-tables).
std::string layer_toml(const LayerDesc& d, const std::string& name) {
  std::string out = "\n[[" + name + "]]\nkind = \"" + layer_kind_name(d.kind) + "\"\n";
  auto key = [&out](const char* k, const std::string& value) { out += std::string(k) + " = " + value + "\n"; };
  const bool window = d.kind == Kind::conv2d || d.kind == Kind::maxpool2d || d.kind == Kind::avgpool2d;
  if (d.kind == Kind::dense || d.kind == Kind::conv2d || d.kind == Kind::token_embedding) key("size", std::to_string(d.size));
  if (d.kind == Kind::token_embedding) key("vocab", std::to_string(d.vocab));
  if (window) key("kernel", std::to_string(d.kernel)), key("stride", std::to_string(d.stride));
  if (d.kind == Kind::conv2d) key("padding", std::to_string(d.padding)), key("bias", d.bias ? "true" : "false");
  if (d.kind == Kind::groupnorm) key("groups", std::to_string(d.groups));
  if (d.kind == Kind::dropout) key("rate", number_text(d.rate, false));
  if (d.kind == Kind::dense && d.per_token) key("per_token", "true"), key("init_std", float_text(d.init_std));
  if (d.kind == Kind::attention)
    key("heads", std::to_string(d.heads)), key("init_std", float_text(d.init_std)),
        key("projection_std", float_text(d.projection_std));
  for (const LayerDesc& b : d.body) out += layer_toml(b, name + ".body");
  for (const LayerDesc& b : d.shortcut) out += layer_toml(b, name + ".shortcut");
  return out;
}

}  // namespace

const char* layer_kind_name(LayerDesc::Kind kind) {
  static const char* const names[] = {"dense",     "conv2d",         "maxpool2d", "relu",      "flatten",
                                      "groupnorm", "global_avgpool", "residual",  "avgpool2d", "dropout",
                                      "token_embedding", "position_embedding", "layernorm", "rmsnorm",
                                      "attention", "gelu", "tied_head"};
  static_assert(sizeof names / sizeof names[0] == kLayerKinds && static_cast<int>(Kind::tied_head) + 1 == kLayerKinds,
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
  else if (spec.kind == "gpt") layers = with_shapes(gpt_description(gpt_spec(spec)), Shape{1, spec.context, 1}, spec.classes);
  else throw ModelError(-1, "kind", "model: unknown kind '" + spec.kind + "' (expected mlp, cnn, resnet8, gpt or layers)");
  const LayerDesc& last = layers.back();
  const bool per_token = is_language_model(layers);
  const Shape expected{1, per_token ? layers.front().in.w : 1, spec.classes};
  if (!(last.out == expected))
    throw ModelError(static_cast<int>(layers.size()) - 1, last.kind == Kind::dense ? "size" : "kind",
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
  return !layers.empty() && layers.front().kind == Kind::token_embedding;
}

bool is_language_model(const ModelSpec& spec) {
  return spec.kind == "gpt" || (spec.kind == "layers" && is_language_model(spec.layers));
}

std::string layers_toml(const ModelSpec& spec) {
  const std::vector<LayerDesc> layers = describe_model(spec);
  std::string out = "[model]\n";
  if (is_language_model(layers)) out += "context = " + std::to_string(layers.front().in.w) + "\n";
  for (const LayerDesc& d : layers) out += layer_toml(d, "model.layers");
  return out;
}

std::string model_json(const ModelSpec& spec) {
  const std::vector<LayerDesc> layers = describe_model(spec);
  std::string out = "{\"kind\": \"" + spec.kind + "\"";
  if (spec.kind == "gpt")  // the preset's sizes, beside the layers they expand into
    out += ", \"blocks\": " + std::to_string(spec.blocks) + ", \"heads\": " + std::to_string(spec.heads) +
           ", \"width\": " + std::to_string(spec.width) + ", \"bias\": true, \"tied_head\": true";
  if (is_language_model(layers))
    out += ", \"context\": " + std::to_string(layers.front().in.w) + ", \"vocab\": " + std::to_string(spec.classes);
  out += ", \"input\": " + shape_json(layers.front().in) + ", \"classes\": " + std::to_string(spec.classes) +
         ", \"parameters\": " + std::to_string(Model(spec).trainable_count()) + ", \"layers\": ";
  return out + layers_json(layers, "  ") + "}";
}

}  // namespace starling
