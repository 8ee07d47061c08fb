#include "actors/node.h"

#include "actors/messages.h"
#include "actors/metrics_actor.h"
#include "actors/node_actor.h"

#include <caf/all.hpp>

#include <stdexcept>
#include <thread>

namespace starling::actors {

bool parse_intra_sync(const std::string& text, IntraSync& out) {
  for (IntraSync mode : {IntraSync::sma, IntraSync::average, IntraSync::none})
    if (text == intra_sync_name(mode)) {
      out = mode;
      return true;
    }
  return false;
}

const char* intra_sync_name(IntraSync mode) {
  switch (mode) {
    case IntraSync::average: return "average";
    case IntraSync::none: return "none";
    case IntraSync::sma: break;
  }
  return "sma";
}

NodeResult run_node(const NodeSpec& spec, const Dataset& train_data, const Dataset& test_data, TrainObserver& observer) {
  // Fail on an impossible model or shard here, before any actor exists.
  Learner probe(spec.train.learner, train_data);
  if (spec.learners > 0 && static_cast<uint32_t>(spec.learners) > train_data.size())
    throw std::invalid_argument("more learners than training samples");

  caf::actor_system_config cfg;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cfg.set("scheduler.max-threads", static_cast<size_t>(spec.threads > 0 ? spec.threads : cores));
  // The node actor waits for its learners' replies once or twice per iteration: a scheduler
  // worker that sleeps 50 µs between polls (CAF's "moderate" phase) would add that to each
  // wait, so idle workers go straight from busy polling to a condition variable that a new
  // message wakes at once.
  cfg.set("work-stealing.moderate-poll-attempts", size_t{0});
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  caf::actor_system system{cfg};

  auto metrics = system.spawn(metrics_actor, &observer);
  auto node = system.spawn(node_actor, spec, train_data, test_data, metrics);
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
  self->request(metrics, caf::infinite, summary_atom::value)
      .receive([&](const TimeSplit& t) {
                 result.compute_seconds = t.compute_seconds;
                 result.imbalance_seconds = t.imbalance_seconds;
                 result.sync_seconds = t.sync_seconds;
               },
               [&](caf::error&) {});
  self->send_exit(metrics, caf::exit_reason::user_shutdown);
  return result;
}

}  // namespace starling::actors
