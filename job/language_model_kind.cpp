// Byte-level language modelling's row of the task registry (job/task_kind.h): text split
// across the peers by file or share, a run measured in steps of batches rather than epochs,
// and validation bits per byte as the metric, with tokens beside samples.
#include "job/data_partition.h"
#include "job/data_source.h"
#include "job/task_kind.h"
#include "job/trained_model.h"
#include "learners/tasks/text_task.h"

#include <algorithm>
#include <cstdio>

namespace starling::job {
namespace {

int window_of(const Config& c) { return c.node.train.learner.model.context + 1; }

// Each file's size and split, and each peer's ranges (offsets within their files).
JsonObject describe(const Config& c, const TextCorpus& corpus, const std::vector<TextPart>& parts) {
  std::vector<JsonObject> files;
  for (const TextFile& f : corpus.files())
    files.push_back(JsonObject()
                        .add("path", f.path)
                        .add("bytes", static_cast<long long>(f.bytes))
                        .add("train_bytes", static_cast<long long>(f.train_bytes)));
  const int window = window_of(c);
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

double tokens_per_second(const actors::NodeResult& node, int context) {
  return static_cast<double>(node.train.samples) * context / std::max(node.train.train_seconds, 1e-9);
}

class LanguageModel final : public TaskKind {
 public:
  Metric metric() const override { return Metric::bits_per_byte; }

  // run.steps counts batches of optimizer.batch windows, as nanoGPT's max_iters: the run
  // trains on steps × batch windows whatever the learner count, and validates every
  // eval_steps batches (0: at the end).
  void configure(Config& c) const override {
    const int64_t batch = c.node.train.learner.batch;
    c.node.train.samples = std::max<int64_t>(1, c.run.steps) * batch;
    c.node.train.eval_samples = c.run.eval_steps > 0 ? c.run.eval_steps * batch : c.node.train.samples;
    c.node.train.target = target(c);
    c.node.exchange_at_start = true;
  }

  PeerTasks load(Config& config) const override {
    const auto corpus = std::make_shared<const TextCorpus>(load_text(config));
    apply_init_from(config);
    const auto parts = std::make_shared<const std::vector<TextPart>>(partition_text_peers(config, *corpus));
    const int window = window_of(config);
    return [corpus, parts, window](Config& peer) {
      const bool alone = peer.node.exchange.mode == gossip::ExchangeMode::none;
      const auto rank = static_cast<std::size_t>(alone ? 0 : peer.node.exchange.rank);
      return std::make_shared<const TextTask>(*corpus, (*parts)[rank], window);
    };
  }

  void fit_model(Config& config) const override { load_text(config); }  // the model's sizes are the config's

  // The split is a function of the files alone: checked whether `lenient` or not.
  void check_split(const Config& config, bool) const override { partition_text_peers(config, load_text(config)); }

  JsonObject describe_split(Config& config) const override {
    const TextCorpus corpus = load_text(config);
    return describe(config, corpus, partition_text_peers(config, corpus));
  }

  int evaluation_batch(const Config& c) const override { return starling::evaluation_batch(c.node.train.learner.model.context); }
  void check_generates(const Config&) const override {}  // every model on text reads bytes

  std::string length(const Config& c) const override { return std::to_string(std::max<int64_t>(1, c.run.steps)) + " steps"; }

  const char* metrics_columns() const override {
    return "step,epoch,wall_seconds,samples,tokens,train_loss,val_loss,val_bpb,tokens_per_second,bytes_sent,bytes_received,"
           "compute_seconds,exchange_seconds";
  }
  std::string metrics_row(const EvalPoint& p, const Config& c) const override {
    const int context = c.node.train.learner.model.context;
    char row[384];
    std::snprintf(row, sizeof row, "%lld,%.6f,%.3f,%lld,%lld,%.6f,%.6f,%.6f,%.1f,%llu,%llu,%.3f,%.3f\n",
                  static_cast<long long>(p.step), p.epoch, p.wall_seconds, static_cast<long long>(p.samples),
                  static_cast<long long>(p.samples) * context, p.train_loss, p.test_loss, bits_per_byte(p.test_loss),
                  p.samples_per_second * context, static_cast<unsigned long long>(p.bytes_sent),
                  static_cast<unsigned long long>(p.bytes_received), p.compute_seconds, p.exchange_seconds);
    return row;
  }

  std::string evaluation_line(const EvalPoint& p, const Config& c) const override {
    char line[200];
    std::snprintf(line, sizeof line, "step %lld  train_loss %.4f  val_loss %.4f  val_bpb %.4f  %.0f tokens/s",
                  static_cast<long long>(p.step), p.train_loss, p.test_loss, bits_per_byte(p.test_loss),
                  p.samples_per_second * c.node.train.learner.model.context);
    return line;
  }

  void summarize(JsonObject& j, const Config& c, const actors::NodeResult& node) const override {
    const EvalPoint& last = node.train.last();
    const int context = c.node.train.learner.model.context;
    j.add("context", context)
        .add("tokens", static_cast<long long>(node.train.samples) * context)
        .add("tokens_per_second", tokens_per_second(node, context))
        .add("val_loss", last.test_loss)
        .add("val_bpb", bits_per_byte(last.test_loss))
        .add("target_bpb", c.run.target_bpb);
  }

  std::string outcome(const Config& c, const actors::NodeResult& node) const override {
    char line[200];
    std::snprintf(line, sizeof line, "val_bpb %.4f after %lld steps in %.1f s (%.0f tokens/s)",
                  bits_per_byte(node.train.last().test_loss), static_cast<long long>(node.train.steps),
                  node.train.wall_seconds, tokens_per_second(node, c.node.train.learner.model.context));
    return line;
  }

  double target(const Config& c) const override { return c.run.target_bpb; }
  const char* target_unit() const override { return " bpb"; }

  // The mean and the worst validation bits per byte over the peers, and their tokens.
  void summarize_job(JsonObject& j, const Config& c, const std::vector<std::string>& peers) const override {
    double loss = 0, bpb = 0, bpb_max = 0, tokens = 0;
    for (const std::string& s : peers) {
      const double peer_bpb = summary_number(s, "val_bpb").value_or(0.0);
      loss += summary_number(s, "val_loss").value_or(0.0) / peers.size(), bpb += peer_bpb / peers.size();
      bpb_max = std::max(bpb_max, peer_bpb);
      tokens += summary_number(s, "tokens").value_or(0.0);
    }
    j.add("val_loss", loss).add("val_bpb", bpb).add("val_bpb_max", bpb_max).add("tokens", tokens).add("target_bpb", c.run.target_bpb);
  }

  std::string job_outcome(const std::string& job) const override {
    return "mean val_bpb " + summary_field(job, "val_bpb") + " (worst " + summary_field(job, "val_bpb_max") + ")";
  }

  // Samples, not the CSV's steps: a node of k learners takes steps / k of them.
  const char* position_column() const override { return "samples"; }
  const char* quality_column() const override { return "val_bpb"; }
  double run_length(const Config& c) const override {
    return static_cast<double>(std::max<int64_t>(1, c.run.steps) * c.node.train.learner.batch);
  }
};

}  // namespace

const TaskKind& language_model_kind() {
  static const LanguageModel kind;
  return kind;
}

}  // namespace starling::job
