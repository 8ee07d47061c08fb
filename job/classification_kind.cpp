// Image classification's row of the task registry (job/task_kind.h): labelled image sets,
// their partitions across peers, and test accuracy as the metric.
#include "gossip/topology/d_cliques.h"
#include "job/data_partition.h"
#include "job/data_source.h"
#include "job/task_kind.h"
#include "learners/tasks/image_task.h"

#include <cstdio>

namespace starling::job {
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

// Every peer's labels and sample indices.
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

std::string metrics_row(const EvalPoint& p) {
  const auto cell = [](const std::optional<double>& v) {
    if (!v) return std::string();
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", *v);
    return std::string(text);
  };
  char row[384];
  std::snprintf(row, sizeof row, "%lld,%.4f,%.3f,%lld,%.6f,%.6f,%.6f,%.1f,%llu,%llu,%.3f,%.3f,%.3f,",
                static_cast<long long>(p.step), p.epoch, p.wall_seconds, static_cast<long long>(p.samples),
                p.train_loss, p.test_accuracy, p.test_loss, p.samples_per_second,
                static_cast<unsigned long long>(p.bytes_sent), static_cast<unsigned long long>(p.bytes_received),
                p.compute_seconds, p.exchange_seconds, p.wait_seconds);
  return row + cell(p.staleness) + "," + cell(p.consensus_distance) + "\n";
}

class Classification final : public TaskKind {
 public:
  Metric metric() const override { return Metric::accuracy; }

  void configure(Config& c) const override { c.node.train.target = target(c); }

  PeerTasks load(Config& config) const override {
    const TrainTest data = load_data(config);
    fit_model_to_data(config.node.train.learner.model, data, config.source);
    const auto parts = std::make_shared<const std::vector<std::vector<uint32_t>>>(partition_peers(config, data.train));
    give_topology_histograms(config, data.train, *parts);
    auto task = std::make_shared<const ImageTask>(data.train, data.test);
    return [task, parts](Config& peer) {
      assign_part(peer, *parts);
      return task;
    };
  }

  void fit_model(Config& config) const override {
    fit_model_to_data(config.node.train.learner.model, load_data(config), config.source);
  }

  void check_split(const Config& config, bool lenient) const override {
    if (config.data.partition.kind == PartitionKind::iid) return;  // needs no labels
    TrainTest data;
    try {
      data = load_data(config);
    } catch (const std::exception&) {
      if (lenient) return;
      throw;
    }
    Config cliques = config;  // a D-Cliques clique lacking a class is found from the labels
    give_topology_histograms(cliques, data.train, partition_peers(config, data.train));
  }

  JsonObject describe_split(Config& config) const override {
    const TrainTest data = load_data(config);
    const auto parts = partition_peers(config, data.train);
    give_topology_histograms(config, data.train, parts);
    return describe(config, data.train, parts);
  }

  int evaluation_batch(const Config&) const override { return kImageEvaluationBatch; }
  void check_generates(const Config& c) const override {
    throw ConfigError(c.data.dataset_at + ": \"" + c.data.dataset + "\": starling generate samples from a language model, "
                      "trained on data.dataset = \"text\"");
  }

  std::string length(const Config& c) const override {
    char text[48];
    std::snprintf(text, sizeof text, "%g epochs", c.run.epochs);
    return text;
  }

  const char* metrics_columns() const override {
    return "step,epoch,wall_seconds,samples,train_loss,test_accuracy,test_loss,samples_per_second,bytes_sent,"
           "bytes_received,compute_seconds,exchange_seconds,wait_seconds,staleness,consensus_distance";
  }
  std::string metrics_row(const EvalPoint& p, const Config&) const override { return job::metrics_row(p); }

  std::string evaluation_line(const EvalPoint& p, const Config&) const override {
    char line[256];
    std::snprintf(line, sizeof line, "epoch %.2f  step %lld  train_loss %.4f  test_accuracy %.4f  test_loss %.4f  %.0f samples/s",
                  p.epoch, static_cast<long long>(p.step), p.train_loss, p.test_accuracy, p.test_loss, p.samples_per_second);
    return line;
  }

  void summarize(JsonObject& j, const Config& c, const actors::NodeResult& node) const override {
    const EvalPoint& last = node.train.last();
    j.add("test_accuracy", last.test_accuracy)
        .add("test_loss", last.test_loss)
        .add("target_accuracy", c.run.target_accuracy)
        .add("label_counts", node.label_counts);
  }

  std::string outcome(const Config&, const actors::NodeResult& node) const override {
    const TrainResult& r = node.train;
    char line[200];
    std::snprintf(line, sizeof line, "test_accuracy %.4f after %.2f epochs in %.1f s (%.0f samples/s)", r.last().test_accuracy,
                  r.last().epoch, r.wall_seconds, r.samples / std::max(r.train_seconds, 1e-9));
    return line;
  }

  double target(const Config& c) const override { return c.run.target_accuracy; }
  const char* target_unit() const override { return ""; }

  // Test accuracy is in the job's summary whatever the task: nothing to add.
  void summarize_job(JsonObject&, const Config&, const std::vector<std::string>&) const override {}

  std::string job_outcome(const std::string& job) const override {
    return "mean test_accuracy " + summary_field(job, "test_accuracy") + " (min " + summary_field(job, "test_accuracy_min") + ")";
  }

  const char* position_column() const override { return "epoch"; }
  const char* quality_column() const override { return "test_accuracy"; }
  double run_length(const Config& c) const override { return c.run.epochs; }
};

}  // namespace

const TaskKind& classification_kind() {
  static const Classification kind;
  return kind;
}

}  // namespace starling::job
