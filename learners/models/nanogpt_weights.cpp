#include "learners/models/nanogpt_weights.h"

#include "learners/models/layer_chain.h"

#include <algorithm>
#include <stdexcept>

namespace starling {
namespace {

using Shape64 = std::vector<int64_t>;

// Lays out tensors in arena order: each layer's parameters fill a slot padded to 64 bytes
// (padded_params), a residual block's body its layers' slots in turn, as gpt_description
// orders them.
class ArenaWalk {
 public:
  // A layer whose parameters are `tensors`, back to back.
  void layer(std::vector<GptTensor> tensors) {
    std::size_t count = 0;
    for (GptTensor& t : tensors) {
      t.offset = at_ + count;
      count += size_of(t.shape);
      out_.push_back(std::move(t));
    }
    at_ += padded_params(count);
  }
  std::vector<GptTensor> take() { return std::move(out_); }

  static std::size_t size_of(const Shape64& shape) {
    std::size_t n = 1;
    for (int64_t d : shape) n *= static_cast<std::size_t>(d);
    return n;
  }

 private:
  std::size_t at_ = 0;
  std::vector<GptTensor> out_;
};

GptTensor tensor(std::string name, Shape64 shape, bool linear_weight = false) {
  return {std::move(name), std::move(shape), 0, linear_weight};
}

std::vector<GptTensor> layer_norm(const std::string& prefix, int64_t c) {
  return {tensor(prefix + ".weight", {c}), tensor(prefix + ".bias", {c})};
}

// nn.Linear(in, out): weight [out, in] (the arena's in × out matrix), then bias [out].
std::vector<GptTensor> linear(const std::string& prefix, int64_t in, int64_t out) {
  return {tensor(prefix + ".weight", {out, in}, true), tensor(prefix + ".bias", {out})};
}

// nanoGPT's LM head shares the token embedding's storage.
constexpr const char* kHead = "lm_head.weight";
constexpr const char* kEmbedding = "transformer.wte.weight";

std::vector<float> gather(const Model& model, const GptTensor& t) {
  std::vector<float> values(ArenaWalk::size_of(t.shape));
  const float* p = model.params() + t.offset;
  if (!t.linear_weight) return std::vector<float>(p, p + values.size());
  const std::size_t out = static_cast<std::size_t>(t.shape[0]), in = static_cast<std::size_t>(t.shape[1]);
  for (std::size_t o = 0; o < out; ++o)
    for (std::size_t i = 0; i < in; ++i) values[o * in + i] = p[i * out + o];
  return values;
}

void scatter(const GptTensor& t, const std::vector<float>& values, Model& model) {
  float* p = model.params() + t.offset;
  if (!t.linear_weight) {
    std::copy(values.begin(), values.end(), p);
    return;
  }
  const std::size_t out = static_cast<std::size_t>(t.shape[0]), in = static_cast<std::size_t>(t.shape[1]);
  for (std::size_t o = 0; o < out; ++o)
    for (std::size_t i = 0; i < in; ++i) p[i * out + o] = values[o * in + i];
}

std::string shape_text(const Shape64& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The model must be exactly the GPT its spec's sizes describe, whatever its kind says.
GptSpec checked_gpt(const Model& model) {
  ModelSpec gpt = model.spec();
  gpt.kind = kGptKind;
  gpt.input = {1, gpt.context, 1};
  if (gpt.mlp != "gelu")
    throw std::invalid_argument("nanoGPT's names fit only its GELU MLP, not model.mlp = \"" + gpt.mlp + "\"");
  if (Model(gpt).signature() != model.signature())
    throw std::invalid_argument("nanoGPT's names fit only the GPT preset (model.kind = \"gpt\"), not " + model.signature());
  return gpt_spec(gpt);
}

}  // namespace

std::vector<GptTensor> nanogpt_tensors(const GptSpec& s) {
  const int64_t c = s.width;
  ArenaWalk walk;
  walk.layer({tensor(kEmbedding, {s.vocab, c})});
  walk.layer({tensor("transformer.wpe.weight", {s.context, c})});
  for (int i = 0; i < s.layers; ++i) {
    const std::string block = "transformer.h." + std::to_string(i);
    walk.layer(layer_norm(block + ".ln_1", c));
    walk.layer(linear(block + ".attn.c_attn", c, 3 * c));
    walk.layer(linear(block + ".attn.c_proj", c, c));
    walk.layer(layer_norm(block + ".ln_2", c));
    walk.layer(linear(block + ".mlp.c_fc", c, 4 * c));
    walk.layer(linear(block + ".mlp.c_proj", 4 * c, c));
  }
  walk.layer(layer_norm("transformer.ln_f", c));
  return walk.take();
}

TensorFile export_nanogpt(const Model& model) {
  const GptSpec s = checked_gpt(model);
  TensorFile file;
  for (const GptTensor& t : nanogpt_tensors(s)) file.tensors.push_back({t.name, t.shape, gather(model, t)});
  NamedTensor head = file.tensors.front();
  head.name = kHead;
  file.tensors.push_back(std::move(head));
  file.metadata = {{"format", "pt"},
                   {"architecture", "nanoGPT"},
                   {"n_layer", std::to_string(s.layers)},
                   {"n_head", std::to_string(s.heads)},
                   {"n_embd", std::to_string(s.width)},
                   {"block_size", std::to_string(s.context)},
                   {"vocab_size", std::to_string(s.vocab)},
                   {"bias", "true"}};
  return file;
}

void import_nanogpt(const TensorFile& file, Model& model) {
  const GptSpec s = checked_gpt(model);
  const std::vector<GptTensor> expected = nanogpt_tensors(s);
  for (const NamedTensor& t : file.tensors) {
    const bool known = t.name == kHead || std::any_of(expected.begin(), expected.end(), [&](const GptTensor& e) { return e.name == t.name; });
    const bool mask = t.name.size() > 10 && t.name.compare(t.name.size() - 10, 10, ".attn.bias") == 0;
    if (!known && !mask) throw SafetensorsError("tensor '" + t.name + "': not a tensor of this GPT (" + model.signature() + ")");
  }
  for (const GptTensor& e : expected) {
    const NamedTensor* t = file.find(e.name);
    if (!t) throw SafetensorsError("tensor '" + e.name + "': missing");
    if (t->shape != e.shape)
      throw SafetensorsError("tensor '" + e.name + "': shape " + shape_text(t->shape) + ", this model needs " + shape_text(e.shape));
    scatter(e, t->values, model);
  }
  if (const NamedTensor* head = file.find(kHead); head && head->values != file.find(kEmbedding)->values)
    throw SafetensorsError(std::string("tensor '") + kHead + "': differs from " + kEmbedding +
                           ", but Starling's GPT ties its head to the token embedding");
}

}  // namespace starling
