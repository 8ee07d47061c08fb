#pragma once
// A kind of layer as one row: all the rest of Starling knows of it. Each file in
// learners/layer_rows/ defines its row, `extern constexpr LayerRow layer_kinds::<file name>_row`, and
// learners/CMakeLists.txt lists those files once; from that list it writes the table of rows
// (layer_rows.cpp, in the build folder), which layer_table() returns. The model description
// (shapes and their checks, the JSON and TOML exports), the factory, the memory estimate, the
// config's `[[model.layers]]` keys and `starling model` read the rows: no other list names
// every layer. Adding a layer is its file (and its kernel, if it has one) plus a line in
// that list.
//
// Rows are constant-initialized, so they can be read at any time, static initialization
// included. They are read while a model is described and built, never per value.
#include "learners/models/layer.h"

#include <cstddef>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace starling {

struct LayerRow;
class TokenEmbedding;

/// An impossible description: the index of the offending layer in the top-level list (−1:
/// the model as a whole), the key at fault within it (e.g. "size", or "body[1].groups"
/// inside a residual block), and why.
class ModelError : public std::invalid_argument {
 public:
  ModelError(int layer, std::string key, const std::string& what)
      : std::invalid_argument(what), layer_(layer), key_(std::move(key)) {}
  int layer() const { return layer_; }
  const std::string& key() const { return key_; }

 private:
  int layer_;
  std::string key_;
};

/// One option of a layer kind, and its config key model.layers[i].<name>.
struct LayerKey {
  enum class Type { integer, number, flag };
  static constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();

  std::string_view name;
  Type type = Type::integer;
  double fallback = kRequired;  // its default; kRequired: a description must give it
  double min = 0, max = 0;      // allowed: [min, max], open at min or max where said
  bool open_min = false, open_max = false;
  std::string_view what;        // what a missing required key is ("the layer's output units")
  std::string_view only_with;   // a flag key that must be true for this one to be taken; empty: always
  std::string_view fallback_from;  // unset, it takes this key's value ("kernel" for a pool's stride)

  bool required() const { return fallback != fallback; }  // NaN

  bool allows(double value) const;
  /// What allows() accepts, as errors say it: "an integer in [1, 1048576]", "a number in [0, 1)".
  std::string range() const;
};

/// An integer key in [min, max]; `what` says what a missing required one is.
constexpr LayerKey integer_key(std::string_view name, double fallback, double min, double max, std::string_view what = "") {
  LayerKey k;
  k.name = name, k.type = LayerKey::Type::integer, k.fallback = fallback, k.min = min, k.max = max, k.what = what;
  return k;
}
/// A number key in [min, max], open at either end where said.
constexpr LayerKey number_key(std::string_view name, double fallback, double min, double max, bool open_min,
                              bool open_max, std::string_view what = "") {
  LayerKey k = integer_key(name, fallback, min, max, what);
  k.type = LayerKey::Type::number, k.open_min = open_min, k.open_max = open_max;
  return k;
}
/// A flag key, true or false.
constexpr LayerKey flag_key(std::string_view name, bool fallback) {
  LayerKey k = integer_key(name, fallback ? 1 : 0, 0, 1);
  k.type = LayerKey::Type::flag;
  return k;
}
/// `key`, taken only where the flag key `flag` is true.
constexpr LayerKey only_with(LayerKey key, std::string_view flag) {
  key.only_with = flag;
  return key;
}

/// One layer of a description: its row, its options by name (numbers; a flag is 0 or 1), a
/// residual block's body and shortcut, and its per-sample shapes (height × width × channels),
/// which describing fills in.
struct LayerDesc {
  const LayerRow* row = nullptr;
  std::vector<std::pair<std::string, double>> options;  // set ones only: value() supplies defaults
  std::vector<LayerDesc> body, shortcut;
  Shape in, out;

  std::string_view kind() const;
  /// Sets (or replaces) an option: a key of the row, or a value the row derives (a tied head's "vocab").
  LayerDesc& set(std::string_view name, double value);
  /// Whether the option was set.
  bool has(std::string_view name) const;
  /// The option's value: as set, else its key's fallback_from or fallback. std::logic_error
  /// for a name the row neither has as a key nor set.
  double value(std::string_view name) const;
  int integer(std::string_view name) const { return static_cast<int>(value(name)); }
  bool flag(std::string_view name) const { return value(name) != 0.0; }
  float single(std::string_view name) const { return static_cast<float>(value(name)); }
};

/// A description of the layer kind named, no options set; std::invalid_argument for a name no row has.
LayerDesc layer_of(std::string_view kind);

/// What describing a list knows beyond the layer at hand: the data's vocabulary, the first
/// token embedding so far (its vocabulary and width; 0 before one), the layer's index in the
/// top-level list, and how to describe a nested list (a residual block's body).
class DescribeContext {
 public:
  int data_vocab = 0;
  int embedding_vocab = 0, embedding_width = 0;
  int index = 0;

  virtual ~DescribeContext() = default;
  /// `list` described from input `in`, its errors named inside this layer: "body[2].size".
  virtual std::vector<LayerDesc> nested(const std::vector<LayerDesc>& list, Shape in, const char* name) = 0;
  /// A ModelError at this layer's key.
  [[noreturn]] void fail(const std::string& key, const std::string& why) const { throw ModelError(index, key, why); }
  /// Fails unless d's input is a token sequence {1, T, C} after a token embedding.
  void require_tokens(const LayerDesc& d, const std::string& label) const;
};

using Layers = std::vector<std::unique_ptr<Layer>>;

/// What building a list carries from layer to layer: `salt` numbers the dropout layers, so
/// that each draws masks of its own; `embedding` is the first token embedding built, the one
/// a tied head shares its weights with; chain() builds a nested list (a residual's body).
class LayerBuild {
 public:
  uint64_t salt = 0;
  TokenEmbedding* embedding = nullptr;

  /// The layers of `descs`, with ReLUs and pools fused as learners/models/layer_factory.h says.
  Layers chain(const std::vector<LayerDesc>& descs);
};

struct LayerRow {
  std::string_view name;  // the config's and the export's `kind`
  std::string_view doc;   // what the config reference adds after its keys; may be empty
  const LayerKey* keys = nullptr;
  std::size_t key_count = 0;
  bool nested = false;  // a residual block: `body` and `shortcut` lists

  /// Checks d across its keys and the layers before it (context), fills in what it derives,
  /// and returns its output shape; throws ModelError naming the key. d.in is set, and every
  /// set key is in range.
  Shape (*shape)(LayerDesc& d, DescribeContext& context) = nullptr;
  /// Appends the layer (or the layers it expands into) to `out`.
  void (*make)(const LayerDesc& d, LayerBuild& build, Layers& out) = nullptr;
  /// Trainable floats (nested lists excluded; the caller adds them); nullptr: none.
  double (*parameters)(const LayerDesc& d) = nullptr;
  /// Floats a forward keeps per sample beyond its output (attention's QKV and
  /// probabilities); nullptr: none.
  double (*activations)(const LayerDesc& d) = nullptr;
  /// How the memory estimate names it ("dense of 10 units on 784 inputs"); nullptr: "<name> on HxWxC".
  std::string (*what)(const LayerDesc& d) = nullptr;
  /// The export's options after "out": `, "size": 10`; nullptr: none.
  std::string (*json)(const LayerDesc& d) = nullptr;
  /// The config's lines for its options, `size = 10\n`; nullptr: none.
  std::string (*toml)(const LayerDesc& d) = nullptr;
  /// What `starling model`'s table adds to its name: "(8)", " per token"; nullptr: nothing.
  std::string (*label)(const LayerDesc& d) = nullptr;

  const LayerKey* key(std::string_view key_name) const;
};

/// A row's keys from an array of them.
template <std::size_t N>
constexpr LayerRow with_keys(LayerRow row, const LayerKey (&keys)[N]) {
  row.keys = keys, row.key_count = N;
  return row;
}

/// Every layer row, in the order of learners/CMakeLists.txt's list (for `for (row : layer_table())`).
const LayerRow* const* layer_rows_begin();
const LayerRow* const* layer_rows_end();
struct LayerTable {
  const LayerRow* const* begin() const { return layer_rows_begin(); }
  const LayerRow* const* end() const { return layer_rows_end(); }
};
inline LayerTable layer_table() { return {}; }

/// The row named; nullptr when this build has none.
const LayerRow* layer_row(std::string_view name);

/// The names of every row, in order.
std::vector<std::string> layer_names();

/// Every row as the config reference lists it: `{ kind = "conv2d", size, kernel, stride = 1,
/// padding = 0, bias = true }`, a key without a default shown bare, each with its doc.
std::string layer_kinds_doc();

/// How the exports write values: an integer key `, "name": 3` (JSON) or `name = 3` (TOML); a
/// number as the shortest decimal that reads back as the same double (a float's, for
/// `single`), with a decimal point; a flag as true or false.
std::string json_key(std::string_view name, const std::string& value);
std::string toml_key(std::string_view name, const std::string& value);
std::string number_text(double value, bool single);
inline std::string flag_text(bool value) { return value ? "true" : "false"; }

}  // namespace starling
