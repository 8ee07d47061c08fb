#include "job/data_partition.h"

#include "gossip/topology/d_cliques.h"

#include <algorithm>
#include <memory>
#include <sstream>

namespace starling::job {
namespace {

int peer_count(const Config& c) {
  return c.node.exchange.mode == gossip::ExchangeMode::none ? 1 : std::max<int>(1, static_cast<int>(c.peers.size()));
}

// The key an error about this partition names: the parameter that shapes it.
const std::string& key_at(const Config& c) {
  switch (c.data.partition.kind) {
    case PartitionKind::dirichlet: return c.data.alpha_at;
    case PartitionKind::shards: return c.data.classes_per_peer_at;
    default: return c.data.partition_at;
  }
}

// A peer needs a sample per learner; "auto" starts with one.
int learners_of(const Config& c, int rank) {
  const int own = c.peers.empty() ? 0 : c.peers[static_cast<std::size_t>(rank)].learners;
  return std::max(1, own > 0 ? own : c.node.learners);
}

// The key an error about a split of text names: only dirichlet has a parameter for it.
const std::string& text_key_at(const Config& c) {
  return c.data.partition.kind == PartitionKind::dirichlet ? c.data.alpha_at : c.data.partition_at;
}

// A PartitionError as a ConfigError at `at`.
[[noreturn]] void rethrow_at(const std::string& at, const PartitionError& e) {
  const std::string why = e.what();
  throw ConfigError(at + ": " + why.substr(why.rfind("partition: ", 0) == 0 ? 11 : 0));
}

uint32_t peer_id(const Config& c, std::size_t rank) { return c.peers.empty() ? 0u : c.peers[rank].id; }

void check_every_peer_has_data(const Config& c, const std::vector<std::vector<uint32_t>>& parts) {
  for (int rank = 0; rank < static_cast<int>(parts.size()); ++rank) {
    const std::size_t size = parts[static_cast<std::size_t>(rank)].size();
    const int learners = learners_of(c, rank);
    if (size >= static_cast<std::size_t>(learners)) continue;
    std::ostringstream out;
    out << key_at(c) << ": the \"" << partition_name(c.data.partition.kind) << "\" partition over " << parts.size()
        << " peers leaves peer " << peer_id(c, static_cast<std::size_t>(rank)) << " with " << size
        << " training samples, fewer than its " << learners << " learner(s); expected a partition that gives every peer data"
        << " (another run.seed, a larger data.alpha or data.classes_per_peer, or fewer peers)";
    throw ConfigError(out.str());
  }
}

std::vector<uint8_t> labels_of(const Dataset& train) {
  std::vector<uint8_t> labels(train.size());
  for (uint32_t i = 0; i < train.size(); ++i) labels[i] = train.label(i);
  return labels;
}

// Under a split by class a clique without some class would average a biased gradient:
// the cliques must hold every class, or the config names the classes one lacks.
void check_cliques_hold_every_class(const Config& c) {
  const auto kind = c.data.partition.kind;
  if (kind != PartitionKind::shards && kind != PartitionKind::by_class) return;
  const gossip::ExchangeSpec& e = c.node.exchange;
  const auto cliques = gossip::choose_cliques(e.label_counts, e.clique_size, e.seed);
  for (std::size_t k = 0; k < cliques.size(); ++k) {
    const std::vector<int> missing = gossip::missing_classes(e.label_counts, cliques[k]);
    if (missing.empty()) continue;
    std::ostringstream out;
    out << (c.clique_size_at.empty() ? "exchange.clique_size" : c.clique_size_at) << ": " << e.clique_size
        << " leaves clique " << k + 1 << " of " << cliques.size() << " (peers";
    for (int rank : cliques[k]) out << " " << peer_id(c, static_cast<std::size_t>(rank));
    out << ") without class" << (missing.size() > 1 ? "es" : "");
    for (std::size_t i = 0; i < missing.size(); ++i) out << (i ? ", " : " ") << missing[i];
    out << " under the \"" << partition_name(kind) << "\" split, and the clique's mean gradient without "
        << (missing.size() > 1 ? "them" : "it") << "; expected cliques that can hold every class (a larger "
        << "exchange.clique_size or data.classes_per_peer)";
    throw ConfigError(out.str());
  }
}

}  // namespace

void give_topology_histograms(Config& config, const Dataset& train, const std::vector<std::vector<uint32_t>>& parts) {
  gossip::ExchangeSpec& e = config.node.exchange;
  if (e.topology != "d-cliques") return;
  if (e.clique_size == 0) e.clique_size = train.classes();
  const std::vector<uint8_t> labels = labels_of(train);
  e.label_counts.clear();
  for (const auto& part : parts) {
    const std::vector<int64_t> counts = label_counts(labels, train.classes(), part);
    e.label_counts.emplace_back(counts.begin(), counts.end());
  }
  check_cliques_hold_every_class(config);
}

std::vector<std::vector<uint32_t>> partition_peers(const Config& config, const Dataset& train) {
  if (config.data.partition.kind == PartitionKind::iid) return {};
  const std::vector<uint8_t> labels = labels_of(train);
  std::vector<std::vector<uint32_t>> parts;
  try {
    parts = partition(labels, train.classes(), peer_count(config), config.data.partition);
  } catch (const PartitionError& e) {
    rethrow_at(key_at(config), e);
  }
  check_every_peer_has_data(config, parts);
  return parts;
}

std::vector<TextPart> partition_text_peers(const Config& config, const TextCorpus& corpus) {
  std::vector<TextPart> parts;
  try {
    parts = partition_text(corpus, peer_count(config), config.data.partition);
  } catch (const PartitionError& e) {
    rethrow_at(text_key_at(config), e);
  }
  const int window = config.node.train.learner.model.context + 1;
  for (std::size_t rank = 0; rank < parts.size(); ++rank)
    if (window_starts(parts[rank], window) == 0)
      throw ConfigError(text_key_at(config) + ": the \"" + partition_name(config.data.partition.kind) + "\" partition over " +
                        std::to_string(parts.size()) + " peers leaves peer " + std::to_string(peer_id(config, rank)) +
                        " no window of " + std::to_string(window) + " bytes; expected a larger data.alpha, another "
                        "run.seed or fewer peers");
  return parts;
}

void assign_partition(Config& config, const Dataset& train) {
  const auto parts = partition_peers(config, train);
  give_topology_histograms(config, train, parts);
  assign_part(config, parts);
}

void assign_part(Config& config, const std::vector<std::vector<uint32_t>>& parts) {
  if (parts.empty()) return;
  const int rank = parts.size() > 1 ? config.node.exchange.rank : 0;
  config.node.part = std::make_shared<const std::vector<uint32_t>>(parts[static_cast<std::size_t>(rank)]);
}

}  // namespace starling::job
