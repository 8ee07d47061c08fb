// The rules across keys of the config (cli/config_schema.h): defaults that follow another
// key, and combinations that rule each other out, each a ConfigError naming the key.
#include "cli/config_schema.h"
#include "job/peer_graph.h"
#include "job/task_kind.h"
#include "job/tokenizer.h"

#include "learners/models/gpt.h"
#include "learners/models/model_description.h"
#include "protocols/codec_row.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace starling::cli {
namespace {

const KeyValue& value_of(const std::vector<KeyValue>& values, const std::string& name) {
  const auto& schema = config_schema();
  for (std::size_t i = 0; i < schema.size(); ++i)
    if (schema[i].name == name) return values[i];
  throw std::logic_error("config schema: no key " + name);
}

KeyValue& value_of(std::vector<KeyValue>& values, const std::string& name) {
  return const_cast<KeyValue&>(value_of(static_cast<const std::vector<KeyValue>&>(values), name));
}

[[noreturn]] void fail(const KeyValue& value, const std::string& what) { throw ConfigError(value.at + ": " + what); }

// A language model's run (job/task_kind.h): it counts steps where an image run counts epochs.
bool language_model(const Config& c) { return &job::task_kind(c.data) == &job::language_model_kind(); }

// [run], [data] and [kernels]: checkpoints need a folder, sets of unknown layout a path, and
// the backend must be one this build has.
void check_run_and_data(const std::vector<KeyValue>& values, const Config& c) {
  if (!kernels::backend_available(c.node.train.learner.backend))
    fail(value_of(values, "kernels.backend"), "\"onednn\": this build has no oneDNN backend (configured with -DSTARLING_ONEDNN=OFF)");
  if (c.node.checkpoint_every > 0 && c.node.checkpoint_dir.empty())
    fail(value_of(values, "run.checkpoint_every"), "needs run.checkpoint_dir");
  if (c.data.path.empty() && (c.data.dataset == "idx" || c.data.dataset == "cifar10"))
    fail(value_of(values, "data.path"), "expected the folder of the data.dataset = \"" + c.data.dataset + "\" files");
  for (const char* key : {"run.steps", "run.eval_steps", "run.target_bpb", "data.tokenizer", "data.vocab_size",
                          "data.tokenizer_model", "data.tokenizer_type"})
    if (value_of(values, key).given && !language_model(c)) fail(value_of(values, key), "expected only with data.dataset = \"text\"");
}

// A subword tokenizer's keys: only with one, and a model file that exists must be a
// SentencePiece model of data.vocab_size tokens (a missing one is trained before training).
void check_tokenizer(const std::vector<KeyValue>& values, const Config& c) {
  const DataOptions& d = c.data;
  if (d.tokenizer != "sentencepiece") {
    for (const char* key : {"data.vocab_size", "data.tokenizer_model", "data.tokenizer_type"})
      if (value_of(values, key).given) fail(value_of(values, key), "expected only with data.tokenizer = \"sentencepiece\"");
    return;
  }
  std::error_code ec;
  if (std::filesystem::exists(d.tokenizer_model, ec)) job::read_tokenizer(d);
}

// A language model's run: steps rather than epochs, and a text path.
void check_text(const std::vector<KeyValue>& values, const Config& c) {
  if (value_of(values, "model.preset").given && value_of(values, "model.preset").text != "none" &&
      !job::is_gpt(c.node.train.learner.model))
    fail(value_of(values, "model.preset"), "expected only with model.kind = \"gpt\" (a preset is a size of the GPT)");
  if (!c.run.init_from.empty()) {
    if (!job::is_gpt(c.node.train.learner.model))
      fail(value_of(values, "run.init_from"), "expected only with model.kind = \"gpt\" (the file holds nanoGPT's tensors)");
    if (!std::filesystem::is_regular_file(c.run.init_from))
      fail(value_of(values, "run.init_from"), "no such file: " + c.run.init_from);
  }
  if (!language_model(c)) return;
  check_tokenizer(values, c);
  if (value_of(values, "run.epochs").given)
    fail(value_of(values, "run.epochs"), "expected run.steps in its place with data.dataset = \"text\" (batches, as nanoGPT's max_iters)");
  if (c.data.path.empty())
    fail(value_of(values, "data.path"), "expected a text file or a folder of them for data.dataset = \"text\" "
                                        "(Debian's fortunes: \"/usr/share/games/fortunes\")");
}

// [optimizer]: the keys of one update rule or schedule are refused with another.
void check_optimizer(const std::vector<KeyValue>& values, const Config& c) {
  const KeyValue& clip = value_of(values, "optimizer.clip_norm");
  if (clip.given && c.node.train.learner.optimizer.kind != "adamw")
    fail(clip, "expected only with optimizer.kind = \"adamw\"");
  const KeyValue& min_lr = value_of(values, "optimizer.min_lr");
  if (min_lr.given && c.node.train.schedule.kind != "cosine") fail(min_lr, "expected only with optimizer.schedule = \"cosine\"");
  if (c.node.train.schedule.min_lr > c.node.train.schedule.lr) fail(min_lr, "above optimizer.lr");
}

// [exchange] and [compression]: what a mode, a codec and the fault timers allow together.
void check_exchange(const std::vector<KeyValue>& values, const Config& c) {
  const auto& x = c.node.exchange;
  if (x.failure_timeout <= x.heartbeat)
    fail(value_of(values, "exchange.failure_timeout_seconds"), "must be longer than exchange.heartbeat_seconds");
  // Async gossip has no barrier to hide.
  if (c.node.overlap && x.mode == gossip::ExchangeMode::async_gossip)
    fail(value_of(values, "exchange.overlap"), "expected false with exchange.mode = \"async-gossip\", which is asynchronous already");
  const KeyValue& overlap_steps = value_of(values, "exchange.overlap_steps");
  if (overlap_steps.given && !c.node.overlap) fail(overlap_steps, "expected only with exchange.overlap = true");
  if (c.node.overlap_steps >= c.node.period)
    fail(overlap_steps, "expected fewer than exchange.period = " + std::to_string(c.node.period) +
                            " (0: the mix lands at the next exchange point)");
  if (x.adaptive_options.min_density > x.adaptive_options.max_density)
    fail(value_of(values, "compression.min_density"), "above compression.max_density");
  if (x.mode == gossip::ExchangeMode::exact_diffusion && x.topology == "one-peer-exponential")
    fail(value_of(values, "exchange.topology"),
         "expected a fixed graph with exchange.mode = \"exact-diffusion\", which needs a symmetric mixing matrix");
  if (x.codec != "none" && (x.mode == gossip::ExchangeMode::none || x.mode == gossip::ExchangeMode::async_gossip))
    fail(value_of(values, "compression.codec"),
         "\"" + x.codec + "\" works with exchange.mode = \"gossip\" (CHOCO-SGD), \"allreduce\" or \"local-sgd\" "
         "(compressed all-reduce); codecs in async gossip are not built yet");
}

// "\"threshold\" or \"topk\"": the codecs with an option of that name.
std::string codecs_with(std::string_view option) {
  std::string names;
  for (const protocols::CodecRow* row : protocols::codec_rows())
    if (row->param(option)) names += (names.empty() ? "\"" : " or \"") + std::string(row->name) + "\"";
  return names;
}

// [compression]: a codec's options are its own (protocols/codec_row.h). Another codec's
// option is refused, and each is checked as the codec checks it.
void check_codec_options(const std::vector<KeyValue>& values, const Config& c) {
  const auto& x = c.node.exchange;
  const protocols::CodecRow& row = *protocols::codec_row(x.codec);  // compression.codec is a choice of the rows
  for (const protocols::CodecRow* other : protocols::codec_rows())
    for (const protocols::CodecParam& p : other->params) {
      if (!p.config_key || row.param(p.name)) continue;
      const KeyValue& given = value_of(values, "compression." + std::string(p.name));
      if (given.given) fail(given, "expected only with compression.codec = " + codecs_with(p.name));
    }
  if (const auto problem = protocols::check_options(row, x.codec_options))
    fail(value_of(values, "compression." + std::string(problem->param)),
         problem->why + " with compression.codec = \"" + x.codec + "\"");
  if (x.adaptive && !row.param("density"))
    fail(value_of(values, "compression.adaptive"), "needs a codec with a density (" + codecs_with("density") + ")");
}

// Quasi-global momentum: D-PSGD's, in place of the local momentum.
void check_quasi_global_momentum(const std::vector<KeyValue>& values, const Config& c) {
  const auto& x = c.node.exchange;
  if (x.quasi_global_momentum == 0.0) return;
  const KeyValue& momentum = value_of(values, "exchange.quasi_global_momentum");
  if (x.mode != gossip::ExchangeMode::gossip)
    fail(momentum, "expected 0 unless exchange.mode = \"gossip\" (D-PSGD's momentum)");
  // QG-DSGDm replaces the local momentum, which non-IID data would make each peer's own.
  const auto& optimizer = c.node.train.learner.optimizer;
  if (optimizer.kind == "sgd" && optimizer.momentum > 0.0)
    fail(momentum, "expected 0 while optimizer.momentum > 0 (it replaces the local momentum: set that to 0)");
}

// Clique Averaging: on D-Cliques' cliques, with SGD's momentum moved onto the clique's mean.
void check_clique_averaging(const std::vector<KeyValue>& values, const Config& c) {
  const auto& x = c.node.exchange;
  const KeyValue& inter = value_of(values, "exchange.inter_clique");
  if (inter.given && x.topology != "d-cliques") fail(inter, "expected only with exchange.topology = \"d-cliques\"");
  if (x.mode != gossip::ExchangeMode::clique_averaging) return;
  if (x.topology != "d-cliques")
    fail(value_of(values, "exchange.topology"), "expected \"d-cliques\" with exchange.mode = \"clique-averaging\" "
                                                "(it averages over D-Cliques' cliques)");
  if (c.node.train.learner.optimizer.kind != "sgd")
    fail(value_of(values, "optimizer.kind"), "expected \"sgd\" with exchange.mode = \"clique-averaging\" (its "
                                             "momentum acts on the clique's mean change, which must be an SGD step)");
}

// The outer optimizer: DiLoCo's on the mean of an all-reduce, or NoLoCo's on a random pair's under gossip.
void check_outer_optimizer(const std::vector<KeyValue>& values, const Config& c) {
  const auto& x = c.node.exchange;
  const bool averaging = x.mode == gossip::ExchangeMode::allreduce || x.mode == gossip::ExchangeMode::local_sgd;
  const bool gossip = x.mode == gossip::ExchangeMode::gossip;
  for (const char* key : {"exchange.outer_lr", "exchange.outer_momentum"})
    if (!averaging && !gossip && value_of(values, key).given)
      fail(value_of(values, key), "expected only with exchange.mode = \"allreduce\" or \"local-sgd\" (DiLoCo's outer "
                                  "step on the peers' all-reduced mean) or \"gossip\" (NoLoCo's, on a random pair's)");
  const KeyValue& nesterov = value_of(values, "exchange.outer_nesterov");
  if (!averaging && nesterov.given)
    fail(nesterov, "expected only with exchange.mode = \"allreduce\" or \"local-sgd\" (NoLoCo's outer momentum is its own)");
  const bool noloco = gossip && (x.outer_lr != 1.0 || x.outer_momentum > 0.0);
  if (noloco && value_of(values, "exchange.topology").given)
    fail(value_of(values, "exchange.topology"), "expected none with an outer step over gossip (NoLoCo): its partner "
                                                "is drawn at random every round");
  if (noloco && x.codec != "none")
    fail(value_of(values, "compression.codec"), "expected \"none\" with an outer step over gossip (NoLoCo)");
  if (noloco && x.quasi_global_momentum > 0.0)
    fail(value_of(values, "exchange.quasi_global_momentum"), "expected 0 with an outer step over gossip (NoLoCo has its own momentum)");
  if (x.adaptive && (x.outer_lr != 1.0 || x.outer_momentum > 0.0))
    fail(value_of(values, "compression.adaptive"), "expected false with an outer optimizer (exchange.outer_lr ≠ 1 or "
                                                   "exchange.outer_momentum > 0): its pseudo-gradients keep a fixed density");
}

// Deferred outer steps: the peers' pseudo-gradients, each member's own model between rounds.
void check_slow_peers(const std::vector<KeyValue>& values, const Config& c) {
  const auto& x = c.node.exchange;
  if (!x.defer_slow_peers) return;
  const KeyValue& key = value_of(values, "exchange.slow_peers");
  if (x.mode != gossip::ExchangeMode::allreduce && x.mode != gossip::ExchangeMode::local_sgd)
    fail(key, "expected \"wait\" unless exchange.mode = \"allreduce\" or \"local-sgd\" (it defers pseudo-gradients "
              "in the outer step)");
  if (c.node.average_gradients) fail(key, "expected \"wait\" with exchange.average = \"gradients\"");
  if (c.node.overlap) fail(value_of(values, "exchange.overlap"), "expected false with exchange.slow_peers = \"defer\"");
  if (x.adaptive) fail(value_of(values, "compression.adaptive"), "expected false with exchange.slow_peers = \"defer\"");
  if (x.codec == "powersgd")
    fail(value_of(values, "compression.codec"), "expected a codec other than \"powersgd\" with exchange.slow_peers = "
                                                "\"defer\" (its low-rank reduce needs every member in every round)");
}

// A gradient all-reduce: DDP's step, the node's mean gradient every step, plain.
void check_gradient_average(const std::vector<KeyValue>& values, const Config& c) {
  if (!c.node.average_gradients) return;
  const KeyValue& average = value_of(values, "exchange.average");
  const auto& x = c.node.exchange;
  if (c.node.intra_sync != actors::IntraSync::average)
    fail(value_of(values, "node.intra_sync"), "expected \"average\" with exchange.average = \"gradients\" (the node steps "
                                              "on its learners' mean gradient, averaged with the peers')");
  if (x.mode != gossip::ExchangeMode::allreduce) fail(average, "expected \"models\" unless exchange.mode = \"allreduce\"");
  if (c.node.period != 1) fail(value_of(values, "exchange.period"), "expected 1 with exchange.average = \"gradients\" (every step's gradient)");
  if (x.codec != "none") fail(value_of(values, "compression.codec"), "expected \"none\" with exchange.average = \"gradients\"");
  if (x.outer_lr != 1.0 || x.outer_momentum > 0.0)
    fail(value_of(values, value_of(values, "exchange.outer_lr").given ? "exchange.outer_lr" : "exchange.outer_momentum"),
         "expected no outer step with exchange.average = \"gradients\" (DiLoCo's outer step works on models)");
  if (c.node.overlap) fail(value_of(values, "exchange.overlap"), "expected false with exchange.average = \"gradients\"");
}

// The algorithms that carry exact state between rounds. Those that step from the model the
// last round returned refuse the overlap, which hands that model back late as a correction
// on later local steps; the outer optimizer steps from its own x₀, which each
// pseudo-gradient is taken against, so every local step still lands in exactly one of them.
// A lossy codec would break what most of them keep: all but the outer optimizer (which
// compresses its pseudo-gradients) refuse one.
struct StatefulAlgorithm {
  bool on;
  std::string named;      // how the config turns it on
  std::string codec_why;  // what a codec would break; empty: it takes one
  bool takes_overlap = false;
};

void refuse_overlap_and_codecs(const std::vector<KeyValue>& values, const Config& c) {
  const auto& x = c.node.exchange;
  const StatefulAlgorithm algorithms[] = {
      {x.mode == gossip::ExchangeMode::gradient_tracking, "exchange.mode = \"gradient-tracking\"",
       "the tracker's mean must stay the mean local change: model and tracker travel uncompressed"},
      {x.mode == gossip::ExchangeMode::push_sum, "exchange.mode = \"push-sum\"",
       "its sums must be conserved: model and weight travel uncompressed"},
      {x.mode == gossip::ExchangeMode::exact_diffusion, "exchange.mode = \"exact-diffusion\"",
       "its correction by the last round's local change must be exact: the model travels uncompressed"},
      {x.mode == gossip::ExchangeMode::clique_averaging, "exchange.mode = \"clique-averaging\"",
       "the clique's mean change must be exact: changes and models travel uncompressed"},
      {x.quasi_global_momentum > 0.0, "exchange.quasi_global_momentum > 0", "CHOCO-SGD has no quasi-global momentum"},
      {x.outer_lr != 1.0 || x.outer_momentum > 0.0,
       "an outer optimizer (exchange.outer_lr ≠ 1 or exchange.outer_momentum > 0)", "", true},
  };
  for (const StatefulAlgorithm& a : algorithms) {
    if (!a.on) continue;
    if (c.node.overlap && !a.takes_overlap)
      fail(value_of(values, "exchange.overlap"),
           "expected false with " + a.named + ", which steps from the mixed model the last round returned");
    if (x.codec != "none" && !a.codec_why.empty())
      fail(value_of(values, "compression.codec"), "expected \"none\" with " + a.named + " (" + a.codec_why + ")");
  }
}

// The [[peer]] list against [exchange] and [node].
void check_peers(const std::vector<KeyValue>& values, const Config& c) {
  const auto& x = c.node.exchange;
  if (x.min_peers > static_cast<int>(c.peers.size()) && x.owner_key.empty())
    fail(value_of(values, "exchange.min_peers"), std::to_string(x.min_peers) + " is more than the " +
                                                     std::to_string(c.peers.size()) + " [[peer]] entries");
  if (x.mode == gossip::ExchangeMode::none) return;
  if (c.peers.size() < 2 && x.owner_key.empty())  // a swarm's peers come from the swarm (docs/swarm.md)
    fail(value_of(values, "exchange.mode"),
         "\"" + std::string(gossip::exchange_mode_name(x.mode)) + "\" needs at least two [[peer]] entries (or swarm.owner_key)");
  if (c.node.learners == 0)
    fail(value_of(values, "node.learners"),
         "\"auto\" is not available with an exchange between peers (every peer must run the same number of iterations)");
}

// model.preset's sizes, where the config does not set them itself; the GPT kind unless set.
void apply_gpt_preset(std::vector<KeyValue>& values) {
  const std::string& name = value_of(values, "model.preset").text;
  for (const GptPreset& p : kGptPresets) {
    if (name != p.name) continue;
    KeyValue& kind = value_of(values, "model.kind");
    if (!kind.given) kind.text = kGptKind;
    const std::pair<const char*, int> sizes[] = {
        {"model.blocks", p.layers}, {"model.heads", p.heads}, {"model.width", p.width}, {"model.context", p.context}};
    for (const auto& [key, size] : sizes)
      if (KeyValue& v = value_of(values, key); !v.given) v.integer = size;
  }
}

}  // namespace

void resolve_dependent_defaults(std::vector<KeyValue>& values) {
  KeyValue& period = value_of(values, "exchange.period");
  if (!period.given && value_of(values, "exchange.mode").text == "local-sgd") period.integer = 10;
  KeyValue& topology = value_of(values, "exchange.topology");
  if (!topology.given && value_of(values, "exchange.mode").text == "clique-averaging") topology.text = "d-cliques";
  if (value_of(values, "model.layers").given) value_of(values, "model.kind").text = kLayerListKind;
  KeyValue& intra_sync = value_of(values, "node.intra_sync");
  // Averaging AdamW replicas averages steps each normalised by its own moments, shorter than
  // one step on the mean gradient where the replicas' gradients disagree: two SMA learners
  // end 5 to 13 % above one on fortunes-gpt (docs/language-models.md). Adam's learners
  // therefore average gradients unless the config asks for SMA (one learner runs no rounds).
  const std::string& optimizer = value_of(values, "optimizer.kind").text;
  const bool several_learners = value_of(values, "node.learners").integer != 1;
  if (!intra_sync.given && (value_of(values, "exchange.average").text == "gradients" ||
                            (several_learners && (optimizer == "adam" || optimizer == "adamw"))))
    intra_sync.text = "average";
  apply_gpt_preset(values);
  if (!value_of(values, "security.curve").flag) value_of(values, "security.keys_dir").text.clear();
}

// Robust aggregation and attackers (issue 33): where they run, and what a topology can hold.
void check_byzantine(const std::vector<KeyValue>& values, const Config& c) {
  const auto& x = c.node.exchange;
  const bool dpsgd = x.mode == gossip::ExchangeMode::gossip && x.codec == "none" && x.quasi_global_momentum == 0.0 &&
                     x.outer_lr == 1.0 && x.outer_momentum == 0.0;
  const bool pairwise = x.mode == gossip::ExchangeMode::async_gossip;
  const KeyValue& aggregator = value_of(values, "exchange.aggregator");
  if (x.aggregator.kind != gossip::Aggregator::mean && !dpsgd && !pairwise)
    fail(aggregator, "expected \"mean\" unless exchange.mode = \"gossip\" without a codec, quasi-global momentum or "
                     "an outer step (D-PSGD), or \"clipped\" under \"async-gossip\"");
  if (pairwise && x.aggregator.kind != gossip::Aggregator::mean && x.aggregator.kind != gossip::Aggregator::clipped)
    fail(aggregator, "expected \"mean\" or \"clipped\" with exchange.mode = \"async-gossip\" (a median or trimmed "
                     "mean of a pair is its mean)");
  for (const char* key : {"exchange.clip_radius", "exchange.clip_relative"})
    if (value_of(values, key).given && x.aggregator.kind != gossip::Aggregator::clipped)
      fail(value_of(values, key), "expected only with exchange.aggregator = \"clipped\"");
  if (x.aggregator.clip_relative > 0.0 && value_of(values, "exchange.clip_radius").given)
    fail(value_of(values, "exchange.clip_relative"), "expected 0 with exchange.clip_radius set (one radius rule)");
  if (x.aggregator.clip_relative > 0.0 && x.mode == gossip::ExchangeMode::async_gossip)
    fail(value_of(values, "exchange.clip_relative"), "expected 0 with exchange.mode = \"async-gossip\" (a pair's "
                                                     "rounds come at no fixed pace)");
  if (x.aggregator.kind == gossip::Aggregator::trimmed_mean && x.topology == "one-peer-exponential")
    fail(value_of(values, "exchange.trim"), "leaves nothing: \"one-peer-exponential\" mixes one neighbour a round");
  if (value_of(values, "exchange.trim").given && x.aggregator.kind != gossip::Aggregator::trimmed_mean)
    fail(value_of(values, "exchange.trim"), "expected only with exchange.aggregator = \"trimmed-mean\"");
  std::vector<bool> attackers;
  for (const PeerEntry& p : c.peers) {
    attackers.push_back(p.attack.on());
    if (p.attack.on() && !dpsgd)
      throw ConfigError(p.attack_at + ": expected \"none\" unless exchange.mode = \"gossip\" without a codec, "
                                      "quasi-global momentum or an outer step (attackers run in D-PSGD's rounds only)");
  }
  if (!dpsgd || c.peers.empty()) return;
  const std::vector<std::vector<int>> graph = job::peer_neighbours(c);
  for (std::size_t r = 0; r < graph.size(); ++r) {
    if (attackers[r]) continue;
    int honest = 0;
    for (int n : graph[r]) honest += attackers[n] ? 0 : 1;
    const int degree = static_cast<int>(graph[r].size());
    // An honest peer whose neighbours all attack has nothing true to mix: the topology cannot place them.
    if (honest == 0 && degree > 0) {
      const auto last = std::find(attackers.rbegin(), attackers.rend(), true);
      throw ConfigError(c.peers[attackers.rend() - last - 1].attack_at + ": more attackers than \"" + x.topology +
                        "\" can place: every neighbour of peer " + std::to_string(c.peers[r].id) + " attacks");
    }
    if (x.aggregator.kind == gossip::Aggregator::trimmed_mean && 2 * x.aggregator.trim >= degree)
      fail(value_of(values, "exchange.trim"), std::to_string(x.aggregator.trim) + " is at least half the " +
                                                  std::to_string(degree) + " neighbours of peer " +
                                                  std::to_string(c.peers[r].id));
  }
  if (std::find(attackers.begin(), attackers.end(), false) == attackers.end())
    throw ConfigError(c.peers.back().attack_at + ": every peer attacks: no honest peer left to train");
}

// Where a subword tokenizer's model lives when data.tokenizer_model is not set: beside the
// checkpoints, or beside the run's outputs.
void default_tokenizer_model(DataOptions& d, const Config& c) {
  if (d.tokenizer != "sentencepiece" || !d.tokenizer_model.empty()) return;
  d.tokenizer_model = c.node.checkpoint_dir.empty() ? c.run.out_dir + "/" + c.run.name + ".tokenizer.model"
                                                    : c.node.checkpoint_dir + "/tokenizer.model";
}

void move_across_keys(Config& c) {
  default_tokenizer_model(c.data, c);
  auto& optimizer = c.node.train.learner.optimizer;
  auto& x = c.node.exchange;
  if (x.mode != gossip::ExchangeMode::clique_averaging || optimizer.kind != "sgd") return;
  x.clique_momentum = optimizer.momentum, x.clique_nesterov = optimizer.nesterov;
  optimizer.momentum = 0.0, optimizer.nesterov = false;
}

void check_across_keys(const std::vector<KeyValue>& values, const Config& c) {
  check_run_and_data(values, c);
  check_text(values, c);
  check_optimizer(values, c);
  check_exchange(values, c);
  check_codec_options(values, c);
  check_quasi_global_momentum(values, c);
  check_clique_averaging(values, c);
  check_outer_optimizer(values, c);
  check_gradient_average(values, c);
  check_slow_peers(values, c);
  refuse_overlap_and_codecs(values, c);
  check_peers(values, c);
  check_byzantine(values, c);
}

}  // namespace starling::cli
