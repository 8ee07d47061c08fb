#include "cli/partition_command.h"

#include "cli/config.h"
#include "cli/data_partition.h"
#include "cli/data_source.h"
#include "cli/exit_codes.h"
#include "cli/json.h"
#include "gossip/topology/d_cliques.h"

#include <spdlog/spdlog.h>

#include <iostream>

namespace starling::cli {
namespace {

std::vector<int64_t> as_json_ints(const std::vector<uint32_t>& indices) { return {indices.begin(), indices.end()}; }

// Under exchange.topology = "d-cliques": the cliques (peer ids) and each one's skew.
JsonObject describe_cliques(const Config& c) {
  const gossip::ExchangeSpec& e = c.node.exchange;
  JsonObject j;
  if (e.topology != "d-cliques") return j;
  std::vector<JsonObject> cliques;
  for (const auto& clique : gossip::choose_cliques(e.label_counts, e.clique_size, e.seed)) {
    std::vector<int64_t> ids;
    for (int rank : clique) ids.push_back(c.peers.empty() ? 0 : static_cast<int64_t>(c.peers[rank].id));
    cliques.push_back(JsonObject().add("peers", ids).add("skew", gossip::clique_skew(e.label_counts, clique)));
  }
  j.add("cliques", cliques);
  return j;
}

JsonObject describe(const Config& c, const Dataset& train, const std::vector<std::vector<uint32_t>>& parts) {
  std::vector<uint8_t> labels(train.size());
  for (uint32_t i = 0; i < train.size(); ++i) labels[i] = train.label(i);
  std::vector<JsonObject> peers;
  for (std::size_t rank = 0; rank < parts.size(); ++rank)
    peers.push_back(JsonObject()
                        .add("id", c.peers.empty() ? 0LL : static_cast<long long>(c.peers[rank].id))
                        .add("label_counts", label_counts(labels, train.classes(), parts[rank]))
                        .add("indices", as_json_ints(parts[rank])));
  JsonObject j = describe_cliques(c);
  j.add("partition", partition_name(c.data.partition.kind))
      .add("alpha", c.data.partition.alpha)
      .add("classes_per_peer", c.data.partition.classes_per_peer)
      .add("seed", static_cast<long long>(c.run.seed))
      .add("classes", train.classes())
      .add("train_samples", static_cast<long long>(train.size()))
      .add("peers", peers);
  return j;
}

// Text: each file's size and split, and each peer's ranges (offsets within their files).
JsonObject describe_text(const Config& c, const TextCorpus& corpus, const std::vector<TextPart>& parts) {
  std::vector<JsonObject> files;
  for (const TextFile& f : corpus.files())
    files.push_back(JsonObject()
                        .add("path", f.path)
                        .add("bytes", static_cast<long long>(f.bytes))
                        .add("train_bytes", static_cast<long long>(f.train_bytes)));
  const int window = c.node.train.learner.model.context + 1;
  std::vector<JsonObject> peers;
  for (std::size_t rank = 0; rank < parts.size(); ++rank) {
    std::vector<JsonObject> ranges;
    long long bytes = 0;
    for (const TextRange& r : parts[rank]) {
      const uint64_t base = corpus.files()[r.file].begin;
      ranges.push_back(JsonObject()
                           .add("file", static_cast<long long>(r.file))
                           .add("begin", static_cast<long long>(r.begin - base))
                           .add("end", static_cast<long long>(r.end - base)));
      bytes += static_cast<long long>(r.end - r.begin);
    }
    peers.push_back(JsonObject()
                        .add("id", c.peers.empty() ? 0LL : static_cast<long long>(c.peers[rank].id))
                        .add("train_bytes", bytes)
                        .add("window_starts", static_cast<long long>(window_starts(parts[rank], window)))
                        .add("ranges", ranges));
  }
  return JsonObject()
      .add("partition", partition_name(c.data.partition.kind))
      .add("alpha", c.data.partition.alpha)
      .add("seed", static_cast<long long>(c.run.seed))
      .add("window", window)
      .add("validation_fraction", c.data.validation_fraction)
      .add("validation_windows", static_cast<long long>(validation_windows(corpus, window).size()))
      .add("files", files)
      .add("peers", peers);
}

std::string describe_configured(Config& config) {
  if (config.data.dataset == "text") {
    const TextCorpus corpus = load_text(config);
    return describe_text(config, corpus, partition_text_peers(config, corpus)).str();
  }
  const TrainTest data = load_data(config);
  const auto parts = partition_peers(config, data.train);
  give_topology_histograms(config, data.train, parts);
  return describe(config, data.train, parts).str();
}

}  // namespace

int run_partition(const PartitionOptions& options) {
  return exit_code_of([&] {
    Config config = load_config(options.config, options.overrides);
    const std::string text = describe_configured(config) + "\n";
    if (options.out.empty()) {
      std::cout << text << std::flush;
      return std::cout ? 0 : 1;
    }
    ensure_parent_dir(options.out);
    write_file_atomic(options.out, text);
    return 0;
  });
}

}  // namespace starling::cli
