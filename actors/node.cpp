#include "actors/node.h"

#include "actors/backend_choice.h"
#include "actors/learner_cost.h"
#include "actors/messages.h"
#include "actors/metrics_actor.h"
#include "actors/node_actor.h"
#include "actors/node_checkpoint.h"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <tuple>
#include <thread>

namespace starling::actors {

bool parse_intra_sync(const std::string& text, IntraSync& out) {
  for (std::size_t i = 0; i < std::size(kIntraSyncNames); ++i)
    if (text == kIntraSyncNames[i]) {
      out = static_cast<IntraSync>(i);
      return true;
    }
  return false;
}

const char* intra_sync_name(IntraSync mode) { return kIntraSyncNames[static_cast<int>(mode)]; }

std::string uneven_learners_note(int learners, int cores, IntraSync mode) {
  if (mode == IntraSync::none || cores < 1 || learners <= cores || learners % cores == 0) return {};
  const int most = (learners + cores - 1) / cores;  // learners on the busiest core
  const double share = static_cast<double>(learners) / (static_cast<double>(cores) * most);
  char line[256];
  std::snprintf(line, sizeof line,
                "%d learners on %d cores: each round waits for the cores that run %d of them, so expect about "
                "%.2fx the samples/s of %d learners; a multiple of %d keeps every core busy",
                learners, cores, most, share, cores, cores);
  return line;
}

namespace {

// The newest valid checkpoint to continue from, and its file; none (a fresh start, with a
// warning) when the folder holds none. CheckpointMismatch for another run's checkpoint.
std::pair<std::shared_ptr<const Checkpoint>, std::string> find_resume_point(const NodeSpec& spec, const Model& model,
                                                                            const Task& task) {
  const auto warn = [](const std::string& line) { spdlog::warn("{}", line); };
  auto found = find_newest_checkpoint(spec.checkpoint_dir, node_fingerprint(spec, model, task), warn);
  if (!found) {
    spdlog::warn("--resume: no valid checkpoint in {}; starting from the beginning", spec.checkpoint_dir);
    return {};
  }
  spdlog::info("resuming from checkpoint {} at step {}", found->path, found->checkpoint.step);
  return {std::make_shared<const Checkpoint>(std::move(found->checkpoint)), found->path};
}

// Makes the folder now, so that a checkpoint folder that cannot exist fails the run before
// it trains, and clears what a writer killed mid-write left.
void prepare_checkpoint_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw CheckpointError(dir + ": cannot create the checkpoint folder: " + ec.message());
  remove_partial_checkpoints(dir);
}

// The spec with "auto" replaced by the backend that measured faster here, logged.
NodeSpec with_backend_chosen(NodeSpec spec, const std::shared_ptr<const Task>& task) {
  if (!spec.choose_backend) return spec;
  const BackendChoice choice = time_and_choose_backend(spec.train.learner, task);
  spdlog::info("{}", choice.note);
  spec.train.learner.backend = choice.backend;
  spec.choose_backend = false;
  return spec;
}

// A fixed count of learners that measures slower than one learner says so, with the cost.
void warn_if_slower_than_one(const NodeSpec& spec, const std::shared_ptr<const Task>& task) {
  if (!worth_timing(spec)) return;
  const LearnerCost cost = judge_learners(spec.learners, spec.intra_sync, spec.sync_every, time_learners(spec, task));
  if (!cost.note.empty()) spdlog::warn("{}", cost.note);
}

// Fails on an impossible model or shard here, before any actor exists (or any timing), and
// finds the checkpoint to resume from. The probe learner is gone before the run's own exist:
// at GPT-2 small's size its model and optimizer state are 1.4 GB.
std::pair<std::shared_ptr<const Checkpoint>, std::string> check_and_find_resume_point(const NodeSpec& spec,
                                                                                      const std::shared_ptr<const Task>& task) {
  LearnerSpec pool = spec.train.learner;
  pool.part = spec.part;
  const Learner probe(pool, task);
  task->check_learners(spec.learners, pool);
  if (!spec.resume) return {};
  return find_resume_point(spec, probe.model(), *task);
}

}  // namespace

NodeResult run_node(const NodeSpec& configured, std::shared_ptr<const Task> task, TrainObserver& observer) {
  const auto [resume, resumed_from] = check_and_find_resume_point(configured, task);
  NodeSpec spec = with_backend_chosen(configured, task);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // node.learners = "auto" tries no more learners than cores: a learner is a compute-bound thread.
  spec.max_learners = std::min(spec.max_learners, static_cast<int>(cores));
  if (spec.checkpoint_every > 0) {
    prepare_checkpoint_dir(spec.checkpoint_dir);
    spdlog::info("a checkpoint every {} steps in {}, the newest {} kept", spec.checkpoint_every, spec.checkpoint_dir,
                 spec.checkpoint_keep);
  }

  if (const std::string note = uneven_learners_note(spec.learners, static_cast<int>(cores), spec.intra_sync); !note.empty())
    spdlog::warn("{}", note);
  warn_if_slower_than_one(spec, task);
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<size_t>(spec.threads > 0 ? spec.threads : cores));
  // The node actor waits for its learners' replies once or twice per iteration: a scheduler
  // worker that sleeps 50 µs between polls (CAF's "moderate" phase) would add that to each
  // wait, so idle workers go straight from busy polling to a condition variable that a new
  // message wakes at once. That wait times out to try stealing work from the other workers,
  // every 10 ms by default: on an oversubscribed host each wake-up can preempt a learner's
  // thread, so idle workers look only once a second (a job queued behind a busy worker is
  // never the node's wait for its learners, which is the node's own job).
  cfg.set("work-stealing.moderate-poll-attempts", size_t{0});
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::seconds(1)});
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  caf::actor_system system{cfg};

  auto metrics = system.spawn(metrics_actor, &observer, spec.on_snapshot);
  auto node = system.spawn(node_actor, spec, task, metrics, resume, resumed_from);
  caf::scoped_actor self{system};
  NodeResult result;
  std::string failure;
  self->request(node, caf::infinite, run_atom::value)
      .receive([&](NodeResult& r) { result = std::move(r); },
               [&](caf::error& err) {
                 const auto& ctx = err.context();
                 failure = ctx.match_elements<std::string>() ? ctx.get_as<std::string>(0) : system.render(err);
               });
  if (!failure.empty()) {
    self->send_exit(metrics, caf::exit_reason::user_shutdown);
    throw std::runtime_error(failure);
  }
  // The node sent its last point and snapshot before it answered: they are handled first.
  self->request(metrics, caf::infinite, flush_atom::value).receive([](bool) {}, [](caf::error&) {});
  self->send_exit(metrics, caf::exit_reason::user_shutdown);
  result.backend = spec.train.learner.backend;
  return result;
}

}  // namespace starling::actors
