#include "cli/text_train.h"

#include "cli/data_partition.h"
#include "cli/data_source.h"
#include "cli/exit_codes.h"
#include "cli/json.h"
#include "cli/progress.h"
#include "cli/text_mixer.h"
#include "learners/text_trainer.h"
#include "platform/cpu_features.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace starling::cli {
namespace {

std::string metrics_row(const EvalPoint& p, int context) {
  char row[384];
  std::snprintf(row, sizeof row, "%lld,%.6f,%.3f,%lld,%lld,%.6f,%.6f,%.6f,%.1f,%llu,%llu,%.3f,%.3f\n",
                static_cast<long long>(p.step), p.epoch, p.wall_seconds, static_cast<long long>(p.samples),
                static_cast<long long>(p.samples) * context, p.train_loss, p.test_loss, bits_per_byte(p.test_loss),
                p.samples_per_second * context, static_cast<unsigned long long>(p.bytes_sent),
                static_cast<unsigned long long>(p.bytes_received), p.compute_seconds, p.exchange_seconds);
  return row;
}

// One CSV row and one log line per validation; the progress line counts windows (samples).
// A peer of an in-process job logs at debug level and reports its step to the launcher.
class TextObserver final : public TrainObserver {
 public:
  TextObserver(const std::string& csv_path, const std::string& label, int context, const PeerOutput* quiet)
      : csv_(csv_path), progress_(label), context_(context), quiet_(quiet) {
    csv_ << kTextMetricsColumns << "\n";
  }
  void on_step(int64_t step, int64_t total, double epoch, double loss, double rate) override {
    if (!quiet_) return progress_.update(step, total, epoch, loss, rate);
    quiet_->step->store(step, std::memory_order_relaxed);
    quiet_->total->store(total, std::memory_order_relaxed);
  }
  void on_eval(const EvalPoint& p) override {
    progress_.clear();
    spdlog::log(quiet_ ? spdlog::level::debug : spdlog::level::info,
                "{}step {}  train_loss {:.4f}  val_loss {:.4f}  val_bpb {:.4f}  {:.0f} tokens/s", tag(), p.step,
                p.train_loss, p.test_loss, bits_per_byte(p.test_loss), p.samples_per_second * context_);
    csv_ << metrics_row(p, context_) << std::flush;
  }
  // The rows up to the checkpoint; those the interrupted run wrote after it are redone.
  void on_resume(const TrainResult& restored) override {
    for (const auto& p : restored.history) csv_ << metrics_row(p, context_);
    csv_ << std::flush;
    spdlog::info("resumed from step {}", restored.history.empty() ? 0 : restored.history.back().step);
  }
  std::string tag() const { return quiet_ ? quiet_->tag : std::string(); }

 private:
  std::ofstream csv_;
  ProgressLine progress_;
  int context_;
  const PeerOutput* quiet_;
};

JsonObject summarize(const Config& c, const TrainResult& r, int64_t parameters, const PeerMixer* peers) {
  const EvalPoint& last = r.last();
  const ModelSpec& m = c.node.train.learner.model;
  const auto& x = c.node.exchange;
  JsonObject j;
  j.add("run", c.run.name)
      .add("mode", std::string(gossip::exchange_mode_name(x.mode)))
      .add("peers", static_cast<int>(std::max<std::size_t>(1, c.peers.size())))
      .add("peer_id", c.peers.empty() ? 0 : static_cast<long long>(c.peers[static_cast<std::size_t>(x.rank)].id))
      .add("learners_per_peer", c.node.learners)
      .add("model", m.kind)
      .add("parameters", static_cast<long long>(parameters))
      .add("backend", std::string(kernels::backend_name(c.node.train.learner.backend)))
      .add("isa", std::string(platform::isa_name(platform::active_isa())))
      .add("batch", c.node.train.learner.batch)
      .add("context", m.context)
      .add("steps", static_cast<long long>(r.steps))
      .add("epochs", last.epoch)
      .add("samples", static_cast<long long>(r.samples))
      .add("tokens", static_cast<long long>(r.samples) * m.context)
      .add("wall_seconds", r.wall_seconds)
      .add("samples_per_second", static_cast<double>(r.samples) / std::max(r.train_seconds, 1e-9))
      .add("tokens_per_second", static_cast<double>(r.samples) * m.context / std::max(r.train_seconds, 1e-9))
      .add("train_loss", last.train_loss)
      .add("val_loss", last.test_loss)
      .add("val_bpb", bits_per_byte(last.test_loss))
      .add("target_bpb", c.run.target_bpb)
      .add("time_to_target_seconds", r.time_to_target_seconds)
      .add("model_checksum", r.model_checksum)
      .add("partition", partition_name(c.data.partition.kind))
      .add("resumed_from_step", r.resumed_from_step ? std::optional<double>(static_cast<double>(*r.resumed_from_step)) : std::nullopt)
      .add("joined_at_step", r.joined_at_step ? std::optional<double>(static_cast<double>(*r.joined_at_step)) : std::nullopt)
      .add("compute_seconds", last.compute_seconds)
      .add("exchange_seconds", last.exchange_seconds)
      .add("bytes_sent", static_cast<long long>(last.bytes_sent))
      .add("bytes_received", static_cast<long long>(last.bytes_received));
  if (peers && peers->exchange()) {
    std::vector<std::string> members;
    for (uint32_t id : peers->exchange()->members()) members.push_back(std::to_string(id));
    j.add("view_changes", static_cast<long long>(peers->exchange()->view_changes())).add("members", members);
    if (c.node.overlap) j.add("overlapped_seconds", peers->overlapped_seconds());
  }
  return j;
}

TextTrainSpec text_spec(const Config& c) {
  TextTrainSpec spec;
  const LearnerSpec& l = c.node.train.learner;
  spec.learner = {l.model, l.optimizer, l.batch, l.backend, l.seed, static_cast<uint64_t>(c.node.exchange.rank), 0, {}};
  spec.sma = {c.node.learners, c.node.alpha, c.node.momentum, c.node.sync_every};
  spec.schedule = c.node.train.schedule;
  spec.steps = std::max<int64_t>(1, c.run.steps);
  spec.eval_steps = c.run.eval_steps;
  spec.target_bpb = c.run.target_bpb;
  spec.checkpoint_dir = c.node.checkpoint_dir;
  spec.checkpoint_every = c.node.checkpoint_every;
  spec.checkpoint_keep = c.node.checkpoint_keep;
  spec.resume = c.node.resume;
  spec.warn = [](const std::string& line) { spdlog::warn("{}", line); };
  spec.period = c.node.period;
  spec.overlap_steps = c.node.overlap_steps;
  return spec;
}

// Trains this node, or this peer (config.node.exchange.rank) on its part of the text.
int train_text_node(const Config& config, const TextCorpus& corpus, const std::vector<TextPart>& parts,
                    const std::string& summary, const PeerOutput* quiet) {
  const bool peer = config.node.exchange.mode != gossip::ExchangeMode::none;
  const auto level = quiet ? spdlog::level::debug : spdlog::level::info;
  TextTrainSpec spec = text_spec(config);
  gossip::ExchangeSpec exchange = config.node.exchange;
  log_exchange_events(exchange, quiet ? quiet->tag : std::string());
  PeerMixer mixer(exchange, config.average_gradients, config.node.overlap);
  if (peer) spec.mixer = &mixer;
  if (peer && config.average_gradients) spec.learner.on_gradients = [&mixer](float*, std::size_t) { mixer.average_gradients(); };
  const Model preview(spec.learner.model);
  const ModelSpec& m = spec.learner.model;
  const std::string csv = config.run.out_dir + "/" + config.run.name + ".metrics.csv";
  ensure_parent_dir(csv);
  TextObserver observer(csv, config.run.name, m.context, quiet);
  spdlog::log(level, "{}run '{}': gpt model ({} blocks, {} heads, width {}, context {}), {} parameters, {} learner(s) of batch {}, "
              "backend {} ({}), {} steps, exchange {}", observer.tag(), config.run.name, m.blocks, m.heads, m.width, m.context,
              preview.trainable_count(), spec.sma.learners, spec.learner.batch, kernels::backend_name(spec.learner.backend),
              platform::isa_name(platform::active_isa()), spec.steps, gossip::exchange_mode_name(config.node.exchange.mode));
  const TrainResult result =
      train_text(spec, corpus, parts[peer ? static_cast<std::size_t>(config.node.exchange.rank) : 0], observer);
  if (peer) mixer.finish();
  const std::string summary_path = summary.empty() ? config.run.out_dir + "/" + config.run.name + ".summary.json" : summary;
  write_file_atomic(summary_path,
                    summarize(config, result, static_cast<int64_t>(preview.trainable_count()), peer ? &mixer : nullptr).str() + "\n");
  const double bpb = bits_per_byte(result.last().test_loss);
  spdlog::log(level, "{}done: val_bpb {:.4f} after {} steps in {:.1f} s ({:.0f} tokens/s); summary {}", observer.tag(), bpb,
              result.steps, result.wall_seconds, static_cast<double>(result.samples) * m.context / result.train_seconds,
              summary_path);
  if (config.run.target_bpb > 0 && !quiet) {
    if (result.time_to_target_seconds) spdlog::info("target {:.4f} bpb reached after {:.1f} s", config.run.target_bpb, *result.time_to_target_seconds);
    else spdlog::warn("target {:.4f} bpb not reached", config.run.target_bpb);
  }
  return 0;
}

}  // namespace

int run_text_job(const Config& config, const std::string& summary, const PeerOutput* quiet) {
  return exit_code_of([&] {
    kernels::set_threads(config.kernel_threads);
    const TextCorpus corpus = load_text(config);
    return train_text_node(config, corpus, partition_text_peers(config, corpus), summary, quiet);
  });
}

PeerTraining text_peers_training(const Config& config) {
  auto corpus = std::make_shared<const TextCorpus>(load_text(config));
  auto parts = std::make_shared<const std::vector<TextPart>>(partition_text_peers(config, *corpus));
  return [config, corpus, parts](uint32_t id, const std::string& summary, const PeerOutput* quiet) {
    Config peer = config;
    select_peer(peer, id);
    return train_text_node(peer, *corpus, *parts, summary, quiet);
  };
}

}  // namespace starling::cli
