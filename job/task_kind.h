#pragma once
// What a job does differently for each kind of task (learners/tasks/task.h): what the config's run
// keys mean, loading and splitting its data, and how its metric reads in the metrics CSV,
// the summaries, the log and the experiment report. Every job runs on the one node runtime
// (actors/node.h); task_kind() and the model lookups below are the one place that tells the
// kinds of data and of model apart by name, and everything else asks the kind they return.
#include "actors/node_spec.h"
#include "job/config.h"
#include "job/json.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace starling::job {

/// How a task's models are judged: what its reports show where the other shows the other.
enum class Metric { accuracy, bits_per_byte };

/// The data of a job's peers, loaded and split once: given the config of one of them (after
/// select_peer, or the config of a lone node), its task, with config.node given that peer's
/// part of the split where the task needs it there.
using PeerTasks = std::function<std::shared_ptr<const Task>(Config& peer)>;

class TaskKind {
 public:
  virtual ~TaskKind() = default;

  virtual Metric metric() const = 0;
  /// Sets what the config's run keys mean for the node: its length and evaluations, its
  /// target, and how its exchange starts. Called once the config is read.
  virtual void configure(Config& config) const = 0;

  /// Loads the data, fits the config's model to it and splits it across the peers; throws
  /// ConfigError (or DataError) naming what the data rules out.
  virtual PeerTasks load(Config& config) const = 0;
  /// Reads the data only as far as fitting the model to it needs (`starling model`).
  virtual void fit_model(Config& config) const = 0;
  /// The split across the peers, checked before any peer starts; ConfigError. Data that
  /// cannot be read is left to the peers to report when `lenient`.
  virtual void check_split(const Config& config, bool lenient) const = 0;
  /// What `starling partition` prints: the split across the peers.
  virtual JsonObject describe_split(Config& config) const = 0;
  /// Samples a validation forward of the central model takes at once (the memory estimate's).
  virtual int evaluation_batch(const Config& config) const = 0;
  /// A ConfigError unless `starling generate` can sample from this task's models.
  virtual void check_generates(const Config& config) const = 0;

  /// The run's length as the log gives it ("5 epochs", "2000 steps").
  virtual std::string length(const Config& config) const = 0;
  /// The metrics CSV's header, and one evaluation's row.
  virtual const char* metrics_columns() const = 0;
  virtual std::string metrics_row(const EvalPoint& point, const Config& config) const = 0;
  /// The log line of one evaluation.
  virtual std::string evaluation_line(const EvalPoint& point, const Config& config) const = 0;
  /// Adds the run's metric to a node's summary.
  virtual void summarize(JsonObject& summary, const Config& config, const actors::NodeResult& node) const = 0;
  /// "test_accuracy 0.8912 after 5.00 epochs in 31.0 s (4120 samples/s)": the run's end.
  virtual std::string outcome(const Config& config, const actors::NodeResult& node) const = 0;
  /// The configured target of the metric (0: none), and its unit in the log ("", " bpb").
  virtual double target(const Config& config) const = 0;
  virtual const char* target_unit() const = 0;

  /// Adds the peers' metric (from their summaries' text) to the job's summary.
  virtual void summarize_job(JsonObject& job, const Config& config, const std::vector<std::string>& peer_summaries) const = 0;
  /// The job summary's metric as its last log line reads it.
  virtual std::string job_outcome(const std::string& job_summary) const = 0;

  /// What an experiment's progress line reads from the CSVs: the position column and the
  /// quality column, and the run's length in the position's unit.
  virtual const char* position_column() const = 0;
  virtual const char* quality_column() const = 0;
  virtual double run_length(const Config& config) const = 0;
};

/// The kind of task that trains on `data`.
const TaskKind& task_kind(const DataOptions& data);

/// The kind of task `model` is built for: language modelling for a model that reads tokens
/// (the GPT, or a layer list that starts with a token_embedding), else classification.
const TaskKind& model_task(const ModelSpec& model);
/// Whether the model's kind reads tokens whatever its layers (the GPT preset).
bool always_on_tokens(const ModelSpec& model);
/// Whether the model is the GPT preset: the model model.preset sizes and run.init_from's
/// nanoGPT tensors fill.
bool is_gpt(const ModelSpec& model);

/// The rows of the registry: image classification and byte-level language modelling.
const TaskKind& classification_kind();
const TaskKind& language_model_kind();

}  // namespace starling::job
