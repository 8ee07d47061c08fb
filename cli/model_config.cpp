#include "cli/model_config.h"

#include "cli/section_reader.h"
#include "job/data_source.h"
#include "job/task_kind.h"
#include "learners/data/dataset_formats.h"
#include "learners/data/text_corpus.h"
#include "learners/models/model_description.h"
#include "learners/models/model_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace starling::cli {
namespace {

std::string where(const std::string& file, const toml::node& node) {
  return node.source().begin.line > 0 ? file + ":" + std::to_string(node.source().begin.line) : file;
}

std::vector<LayerDesc> read_layers(const toml::node& node, const std::string& name, const std::string& file,
                                   bool allow_empty);

// One key of a layer's row (learners/models/layer_row.h), checked against its type and range; a
// required key that is missing is refused.
void read_key(SectionReader& r, const toml::table& table, const LayerKey& key, LayerDesc& d) {
  const std::string name(key.name);
  if (!table.get(name)) {
    if (key.required()) r.reject(name, std::string(key.what));
    return;
  }
  double value = 0;
  if (key.type == LayerKey::Type::flag) value = r.boolean(name, false) ? 1.0 : 0.0;
  else if (key.type == LayerKey::Type::integer)
    value = static_cast<double>(r.integer(name, 0, static_cast<int64_t>(key.min), static_cast<int64_t>(key.max)));
  else value = r.number(name, 0.0, key.min, key.max, key.open_min);
  if (!key.allows(value)) r.reject(name, key.range());
  d.set(key.name, value);
}

// One entry of a layer list; its keys are named `name`.key (model.layers[i].size), and a key
// its kind does not take (or takes only beside another, as init_std with per_token) is
// reported as unknown.
LayerDesc read_layer(const toml::table& table, const std::string& name, const std::string& file) {
  SectionReader r(table, name, file);
  const std::string kind = r.choice("kind", "", layer_names());
  if (kind.empty()) r.reject("kind", "the layer's kind");
  LayerDesc d = layer_of(kind);
  for (std::size_t k = 0; k < d.row->key_count; ++k) {
    const LayerKey& key = d.row->keys[k];
    if (key.only_with.empty() || d.flag(key.only_with)) read_key(r, table, key, d);
  }
  if (d.row->nested) {
    r.take_external("body");
    r.take_external("shortcut");
    if (!table.get("body")) r.reject("body", "the block's layers (an array of layer tables)");
    d.body = read_layers(*table.get("body"), name + ".body", file, false);
    if (const toml::node* shortcut = table.get("shortcut")) d.shortcut = read_layers(*shortcut, name + ".shortcut", file, true);
  }
  r.finish();
  return d;
}

std::vector<LayerDesc> read_layers(const toml::node& node, const std::string& name, const std::string& file,
                                   bool allow_empty) {
  const toml::array* array = node.as_array();
  if (!array || (array->empty() && !allow_empty))
    throw ConfigError(where(file, node) + ": " + name + ": expected a non-empty array of layer tables");
  std::vector<LayerDesc> layers;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    const std::string item_name = name + "[" + std::to_string(i) + "]";
    if (!item.as_table()) throw ConfigError(where(file, item) + ": " + item_name + ": expected a table { kind = ... }");
    layers.push_back(read_layer(*item.as_table(), item_name, file));
  }
  return layers;
}

// The shape and classes of the sets whose shape the config alone decides (Fashion-MNIST and
// the synthetic set have the model's default 28x28x1 and 10); false for "idx".
bool known_shape(const DataOptions& data, ModelSpec& model) {
  if (data.dataset == "idx") return false;
  if (data.dataset == "cifar10") model.input = kCifar10Shape, model.classes = kCifar10Classes;
  else model.input = ModelSpec{}.input, model.classes = ModelSpec{}.classes;
  return true;
}

// The deepest entry of `item` that a ModelError's key path ("body[1].groups") names: a
// nested layer table has a line of its own when it is written as [[model.layers.body]].
const toml::node* entry_named(const toml::node* item, const std::string& key) {
  std::size_t at = 0;
  while (item && item->as_table()) {
    const std::size_t open = key.find('[', at), dot = key.find('.', at);
    if (open == std::string::npos || (dot != std::string::npos && dot < open)) break;
    const toml::array* list = item->as_table()->get_as<toml::array>(key.substr(at, open - at));
    const std::size_t close = key.find(']', open);
    if (!list || close == std::string::npos) break;
    const toml::node* inner = list->get(static_cast<std::size_t>(std::atoi(key.c_str() + open + 1)));
    if (!inner) break;
    item = inner;
    at = close + 2;  // past "]."
  }
  return item;
}

// A ModelError as a ConfigError naming the offending entry (its line where known) and key
// (job/data_source.h's model_error_key).
[[noreturn]] void report(const ModelError& e, const ModelSpec& model, const toml::node* layers, const std::string& file) {
  const toml::node* item = nullptr;
  if (is_layer_list(model) && e.layer() >= 0 && layers && layers->as_array()) item = layers->as_array()->get(e.layer());
  if (item) item = entry_named(item, e.key());
  throw ConfigError((item ? where(file, *item) : file) + ": " + job::model_error_key(e, model) + ": " + e.what());
}

// Data a language model trains on, and a model built for it (job/task_kind.h's registry tells).
bool on_text(const DataOptions& data) { return &job::task_kind(data) == &job::language_model_kind(); }
bool reads_tokens(const ModelSpec& model) { return &job::model_task(model) == &job::language_model_kind(); }

// A language model: the GPT preset or a layer list that starts with a token_embedding, on
// text, its input the context's token ids and its vocabulary the 256 bytes or data.vocab_size. An image model on
// text, the GPT on images, or heads that do not divide the width is refused, named at its key.
void read_language_model(const toml::table& root, const std::string& file, const std::set<std::string>& overridden,
                         const DataOptions& data, const toml::node* layers, ModelSpec& model) {
  const SectionReader r(root, "model", file, overridden);
  if (!on_text(data)) r.reject("kind", "a preset for images with data.dataset = \"" + data.dataset + "\" (\"gpt\" trains on \"text\")");
  const char* expected = "model.kind = \"gpt\" with data.dataset = \"text\", or a layer list that starts with a "
                         "token_embedding (its vocabulary is the 256 byte values, or data.vocab_size subwords)";
  if (!reads_tokens(model)) r.reject(is_layer_list(model) ? "layers" : "kind", expected);
  if (job::is_gpt(model) && model.width % model.heads != 0)
    r.reject("heads", "a divisor of model.width (" + std::to_string(model.width) + "), not " + std::to_string(model.heads));
  model.input = Shape{1, model.context, 1};
  model.classes = data.tokenizer == "sentencepiece" ? data.vocab_size : kByteVocabulary;
  try {
    describe_model(model);
  } catch (const ModelError& e) {
    report(e, model, layers, file);
  }
}

}  // namespace

void read_model(const toml::table& root, const std::string& file, const std::set<std::string>& overridden,
                const DataOptions& data, ModelSpec& model) {
  const toml::node* layers = root["model"]["layers"].node();
  if (layers) {
    const SectionReader r(root, "model", file, overridden);
    if (root["model"]["kind"] || root["model"]["hidden"])
      r.reject(root["model"]["kind"] ? "kind" : "hidden", "nothing beside model.layers (a layer list is the whole model)");
    model.kind = kLayerListKind;
    model.layers = read_layers(*layers, "model.layers", file, false);
  }
  if (job::always_on_tokens(model) || on_text(data)) return read_language_model(root, file, overridden, data, layers, model);
  ModelSpec fitted = model;
  if (!known_shape(data, fitted)) return;
  try {
    describe_model(fitted);
  } catch (const ModelError& e) {
    report(e, fitted, layers, file);
  }
}

namespace {

// How a node of this config holds its model; `learners` counts what node.learners = "auto"
// may reach (every core).
MemoryUse memory_use(const Config& c) {
  const LearnerSpec& l = c.node.train.learner;
  MemoryUse use;
  use.batch = l.batch;
  use.learners = c.node.learners > 0 ? c.node.learners : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  use.optimizer_slots = optimizer_slots(l.optimizer.kind, l.optimizer.momentum);
  use.node_slots = c.node.intra_sync == actors::IntraSync::average ? use.optimizer_slots : 0;
  use.evaluation_batch = job::task_kind(c.data).evaluation_batch(c);
  return use;
}

}  // namespace

TrainingMemory training_memory(const Config& c) {
  const LearnerSpec& l = c.node.train.learner;
  TrainingMemory m;
  const MemoryUse use = memory_use(c);
  m.learners = use.learners;
  m.parts = estimate_memory(l.model);
  for (std::size_t i = 0; i < m.parts.size(); ++i) {
    m.bytes += use.part_bytes(m.parts[i]);
    if (m.largest < 0 || use.part_bytes(m.parts[i]) > use.part_bytes(m.parts[static_cast<std::size_t>(m.largest)]))
      m.largest = static_cast<int>(i);
  }
  return m;
}

void check_model_memory(const toml::table& root, const std::string& file, const Config& c) {
  const LearnerSpec& l = c.node.train.learner;
  if (c.data.dataset == "idx" && !job::always_on_tokens(l.model)) return;  // its shape is known once the files are read
  const double machine = physical_memory_bytes();
  if (machine <= 0) return;
  const TrainingMemory m = training_memory(c);
  if (m.bytes <= machine || m.largest < 0) return;
  const PartMemory& largest = m.parts[static_cast<std::size_t>(m.largest)];
  const MemoryUse use = memory_use(c);
  const toml::node* node = root["model"][largest.key].node();
  std::string name = "model." + largest.key;
  if (largest.key == "layers" && node && node->as_array()) {
    name += "[" + std::to_string(largest.layer) + "]";
    node = node->as_array()->get(static_cast<std::size_t>(largest.layer));
  }
  char parameters[32];
  std::snprintf(parameters, sizeof parameters, "%.0f", largest.parameters);
  throw ConfigError((node ? where(file, *node) : file) + ": " + name + ": " + largest.what + " needs about " +
                    format_bytes(use.part_bytes(largest)) + " (" + parameters + " parameters with their gradients and " +
                    "optimizer state on " + std::to_string(m.learners) + (m.learners == 1 ? " learner" : " learners") +
                    ", activations at batch " + std::to_string(l.batch) + "); the model needs at least " +
                    format_bytes(m.bytes) + ", more than this machine's " + format_bytes(machine) + " of memory");
}

}  // namespace starling::cli
