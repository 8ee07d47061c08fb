// The config schema's [compression] section (cli/compression_keys.h).
#include "cli/compression_keys.h"

#include <algorithm>
#include <string>

#include "cli/key_types.h"
#include "protocols/codec_row.h"

namespace starling::cli {
namespace {

using V = const KeyValue&;
using namespace key_types;

// The names of the codecs (but "none") whose rows pass `keep`, as "fp16/bf16/qsgd".
template <typename Keep>
std::string codec_names(Keep keep) {
  std::string names;
  for (const protocols::CodecRow* row : protocols::codec_rows())
    if (row->id != protocols::CodecId::none && keep(*row)) names += (names.empty() ? "" : "/") + std::string(row->name);
  return names;
}

std::string codecs_by(protocols::AllreduceRoute route) {
  return codec_names([route](const protocols::CodecRow& row) { return row.route == route; });
}

KeySpec codec_key() {
  std::vector<std::string> names;
  for (const protocols::CodecRow* row : protocols::codec_rows()) names.emplace_back(row->name);
  return {"compression.codec", choice("none", names),
          "with gossip CHOCO-SGD; with allreduce/local-sgd an all-reduce of compressed changes with error feedback: " +
              codecs_by(protocols::AllreduceRoute::ring) + " in the ring, " +
              codecs_by(protocols::AllreduceRoute::low_rank) + " as a low-rank reduce, " +
              codecs_by(protocols::AllreduceRoute::gather) +
              " as an all-gather; with an outer step (DiLoCo) its pseudo-gradients compressed so",
          [](V v, Config& c) { c.node.exchange.codec = v.text; }};
}

// compression.<name>: an option of the codecs that have one so named. Its range is the
// widest any of them allows (each codec's own range and rules are checked across keys,
// config_checks.cpp), its default theirs (they agree), its doc each one's.
KeySpec codec_option_key(const std::string& name) {
  bool integral = true, open_min = true;
  double min = kInf, max = -kInf, fallback = 0.0;
  std::string doc;
  for (const protocols::CodecRow* row : protocols::codec_rows()) {
    const protocols::CodecParam* p = row->param(name);
    if (!p) continue;
    if (p->min < min) open_min = p->open_min;
    else if (p->min == min) open_min = open_min && p->open_min;
    min = std::min(min, p->min), max = std::max(max, p->max), fallback = p->fallback;
    integral = integral && p->integer;
    doc += (doc.empty() ? "" : "; ") + std::string(row->name) + ": " + std::string(p->doc);
  }
  const KeyType type = integral ? integer(static_cast<int64_t>(fallback), static_cast<int64_t>(min), static_cast<int64_t>(max))
                                : number(fallback, min, max, open_min);
  // Unset, an option keeps the codec's default: only a value given is passed on.
  return {"compression." + name, type, doc, [name, integral](V v, Config& c) {
            if (v.given) c.node.exchange.codec_options.set(name, integral ? static_cast<double>(v.integer) : v.number);
          }};
}

}  // namespace

// [compression]: the codec of compressed gossip or all-reduce, its options, and adaptive compression.
std::vector<KeySpec> compression_keys() {
  std::vector<KeySpec> keys{codec_key()};
  std::vector<std::string> options;
  for (const protocols::CodecRow* row : protocols::codec_rows())
    for (const protocols::CodecParam& p : row->params)
      if (p.config_key && std::find(options.begin(), options.end(), p.name) == options.end()) options.emplace_back(p.name);
  for (const std::string& name : options) keys.push_back(codec_option_key(name));
  const std::string with_density = codec_names([](const protocols::CodecRow& row) { return row.param("density") != nullptr; });
  std::vector<KeySpec> adaptive{
    {"compression.adaptive", flag(false),
     "steer the density so communication hides behind compute (" + with_density + "); each change is logged; a "
     "tightening that does not cut communication time is undone",
     [](V v, Config& c) { c.node.exchange.adaptive = v.flag; }},
    {"compression.min_density", number(1e-4, 0.0, 1.0, kOpen), "adaptive compression: the lowest density",
     [](V v, Config& c) { c.node.exchange.adaptive_options.min_density = v.number; }},
    {"compression.max_density", number(1.0, 0.0, 1.0, kOpen), "adaptive compression: the highest density",
     [](V v, Config& c) { c.node.exchange.adaptive_options.max_density = v.number; }},
  };
  for (KeySpec& k : adaptive) keys.push_back(std::move(k));
  return keys;
}

}  // namespace starling::cli
