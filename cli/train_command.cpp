#include "cli/train_command.h"

#include "cli/config.h"
#include "cli/data_source.h"
#include "cli/json.h"
#include "cli/progress.h"
#include "kernels/cpu_features.h"
#include "actors/node.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>

namespace starling::cli {
namespace {

// Streams one CSV row per evaluation and the progress line; both survive a crash mid-run.
class CliObserver final : public TrainObserver {
 public:
  CliObserver(const std::string& csv_path, const std::string& label) : csv_(csv_path), progress_(label) {
    csv_ << "step,epoch,wall_seconds,train_loss,test_accuracy,test_loss,samples_per_second\n";
  }
  void on_step(int64_t step, int64_t total, double epoch, double loss, double rate) override {
    progress_.update(step, total, epoch, loss, rate);
  }
  void on_eval(const EvalPoint& p) override {
    progress_.clear();
    spdlog::info("epoch {:.2f}  step {}  train_loss {:.4f}  test_accuracy {:.4f}  test_loss {:.4f}  {:.0f} samples/s",
                 p.epoch, p.step, p.train_loss, p.test_accuracy, p.test_loss, p.samples_per_second);
    char row[256];
    std::snprintf(row, sizeof row, "%lld,%.4f,%.3f,%.6f,%.6f,%.6f,%.1f\n", static_cast<long long>(p.step), p.epoch,
                  p.wall_seconds, p.train_loss, p.test_accuracy, p.test_loss, p.samples_per_second);
    csv_ << row << std::flush;
  }

 private:
  std::ofstream csv_;
  ProgressLine progress_;
};

JsonObject summarize(const Config& c, const actors::NodeResult& node) {
  const TrainResult& r = node.train;
  const EvalPoint& last = r.last();
  JsonObject j;
  j.add("run", c.run.name)
      .add("mode", "single")
      .add("peers", 1)
      .add("learners_per_peer", node.learners)
      .add("intra_sync", actors::intra_sync_name(c.node.intra_sync))
      .add("model", c.node.train.learner.model.kind)
      .add("backend", std::string(kernels::backend_name(c.node.train.learner.backend)))
      .add("isa", std::string(kernels::isa_name(kernels::active_isa())))
      .add("batch", c.node.train.learner.batch)
      .add("epochs", last.epoch)
      .add("steps", static_cast<long long>(r.steps))
      .add("samples", static_cast<long long>(r.samples))
      .add("wall_seconds", r.wall_seconds)
      .add("samples_per_second", r.samples / std::max(r.train_seconds, 1e-9))
      .add("train_loss", last.train_loss)
      .add("test_accuracy", last.test_accuracy)
      .add("test_loss", last.test_loss)
      .add("target_accuracy", c.run.target_accuracy)
      .add("time_to_target_seconds", r.time_to_target_seconds)
      .add("compute_seconds", node.compute_seconds)
      .add("imbalance_seconds", node.imbalance_seconds)
      .add("sync_seconds", node.sync_seconds)
      .add("bytes_sent", 0)
      .add("bytes_received", 0)
      .add("model_checksum", r.model_checksum);
  return j;
}

}  // namespace

int run_train(const TrainOptions& options) {
  Config config;
  try {
    config = load_config(options.config, options.overrides);
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return 2;
  }
  try {
    kernels::set_threads(config.kernel_threads);
    const TrainTest data = load_data(config);
    const Model preview(config.node.train.learner.model);
    spdlog::info("run '{}': {} model, {} parameters, {} learner(s) ({}), batch {}, backend {} ({}), {} epochs on {} samples",
                 config.run.name, config.node.train.learner.model.kind, preview.param_count(),
                 config.node.learners > 0 ? std::to_string(config.node.learners) : std::string("auto"),
                 actors::intra_sync_name(config.node.intra_sync), config.node.train.learner.batch,
                 kernels::backend_name(config.node.train.learner.backend), kernels::isa_name(kernels::active_isa()),
                 config.run.epochs, data.train.size());
    const std::string csv = config.run.out_dir + "/" + config.run.name + ".metrics.csv";
    ensure_parent_dir(csv);
    CliObserver observer(csv, config.run.name);
    const actors::NodeResult node = actors::run_node(config.node, data.train, data.test, observer);
    const TrainResult& result = node.train;
    const std::string summary_path =
        options.summary.empty() ? config.run.out_dir + "/" + config.run.name + ".summary.json" : options.summary;
    write_file_atomic(summary_path, summarize(config, node).str() + "\n");
    const EvalPoint& last = result.last();
    spdlog::info("done: test_accuracy {:.4f} after {:.2f} epochs in {:.1f} s ({:.0f} samples/s); summary {}",
                 last.test_accuracy, last.epoch, result.wall_seconds, result.samples / result.train_seconds,
                 summary_path);
    if (config.run.target_accuracy > 0) {
      if (result.time_to_target_seconds)
        spdlog::info("target {:.4f} reached after {:.1f} s", config.run.target_accuracy, *result.time_to_target_seconds);
      else
        spdlog::warn("target {:.4f} not reached", config.run.target_accuracy);
    }
    return 0;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}

}  // namespace starling::cli
