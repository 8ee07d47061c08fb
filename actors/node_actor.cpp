#include "actors/node_actor.h"

#include "actors/learner_actor.h"
#include "actors/node_checkpoint.h"
#include "actors/node_exchange.h"
#include "learners/sampler.h"
#include "learners/sma.h"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <cmath>

namespace starling::actors {
namespace {

using Self = caf::stateful_actor<NodeState>*;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int learner_count(Self self) { return static_cast<int>(self->state.learners.size()); }

int peer_count(const NodeSpec& spec) {
  return spec.exchange.mode == gossip::ExchangeMode::none ? 1 : std::max<int>(1, static_cast<int>(spec.exchange.peers.size()));
}

// With a fixed learner count each learner trains on its own shard; while auto-tuning the
// count is not known in advance, so every learner draws from the whole set (or the peer's
// part) in its own order. Under a partition the peer's part is the pool the learners share.
LearnerSpec learner_spec(const NodeState& s, int index) {
  LearnerSpec spec = s.spec.train.learner;
  const int peers = s.spec.part ? 1 : peer_count(s.spec);
  const int rank = peers > 1 ? s.spec.exchange.rank : 0;
  spec.part = s.spec.part;
  if (s.spec.learners > 0) {
    spec.shard = rank * s.spec.learners + index, spec.shards = peers * s.spec.learners;
  } else {
    spec.shard = rank, spec.shards = peers;
    spec.seed = mix_seed(spec.seed, static_cast<uint64_t>(index));
  }
  return spec;
}

void add_learner(Self self) {
  auto& s = self->state;
  const int index = learner_count(self);
  auto learner = s.spec.detached_learners
                     ? self->spawn<caf::detached>(learner_actor, index, learner_spec(s, index), s.train)
                     : self->spawn(learner_actor, index, learner_spec(s, index), s.train);
  self->monitor(learner);
  s.learners.push_back(learner);
  s.group.reset();
  s.load_next = true;
  s.schedule.set_learners(learner_count(self));
}

void remove_last_learner(Self self) {
  auto& s = self->state;
  self->demonitor(s.learners.back());
  self->send_exit(s.learners.back(), caf::exit_reason::user_shutdown);
  s.learners.pop_back();
  s.group.reset();
  s.schedule.set_learners(learner_count(self));
}

float alpha(const NodeState& s, int k) {
  return static_cast<float>(s.spec.alpha > 0 ? s.spec.alpha : 1.0 / k);
}

void finish(Self self) {
  auto& s = self->state;
  if (s.overlap)
    spdlog::info("exchange beside the compute: the mixes took {:.2f} s, the node waited {:.2f} s in the exchange",
                 s.overlap->overlapped_seconds(), s.exchange_seconds);
  if (s.exchange) {
    try {
      s.exchange->finish();
    } catch (const std::exception& e) {
      spdlog::warn("leaving the peers: {}", e.what());
    }
  }
  s.result.steps = s.schedule.iteration(), s.result.samples = s.schedule.samples();
  s.result.wall_seconds = seconds_since(s.start);
  s.result.train_seconds = s.result.wall_seconds - s.eval_seconds;
  s.result.model_checksum = checksum_hex(s.central->params(), s.central->param_count());
  NodeResult out;
  out.train = s.result;
  out.learners = learner_count(self);
  out.autotune_log = s.autotune_log;
  out.exchange_seconds = s.exchange_seconds;
  out.compute_seconds = s.mean_compute_seconds;
  out.imbalance_seconds = std::max(0.0, s.compute_seconds - s.mean_compute_seconds);
  out.sync_seconds = s.wait_seconds;
  if (s.exchange)
    out.bytes_sent = s.exchange->bytes_sent() + s.bytes_sent_before,
    out.bytes_received = s.exchange->bytes_received() + s.bytes_received_before;
  out.resumed_from = s.resumed_from;
  out.resumed_from_step = s.resumed_from_step;
  out.joined_at_step = s.joined_at_step;
  std::vector<LearnerSpec> specs;
  for (int i = 0; i < learner_count(self); ++i) specs.push_back(learner_spec(s, i));
  out.label_counts = epoch_label_counts(specs, s.train);
  if (s.exchange) {
    out.drops = s.exchange->drops();
    out.view_changes = s.exchange->view_changes();
    out.members = s.exchange->members();
  }
  s.done.deliver(out);
  if (s.group) s.group->abort();
  for (auto& l : s.learners) self->send_exit(l, caf::exit_reason::user_shutdown);
  self->quit();
}

void fail(Self self, const std::string& why) {
  auto& s = self->state;
  s.done.deliver(caf::make_error(caf::sec::runtime_error, why));
  if (s.group) s.group->abort();  // learners waiting for a failed one
  for (auto& l : s.learners) self->send_exit(l, caf::exit_reason::user_shutdown);
  self->quit(caf::make_error(caf::sec::runtime_error, why));
}

// Folds the reports of one iteration into z: the mean gradient's step (synchronous SGD) or
// the mean of the replicas (independent replicas). SMA has its own sliced round.
void combine(Self self) {
  auto& s = self->state;
  s.z_stale = false;
  const std::size_t n = s.central->param_count();
  const int k = learner_count(self);
  std::vector<const float*> vectors;
  for (const auto& r : s.reports)
    if (r.vector) vectors.push_back(r.vector);
  if (vectors.empty()) return;
  float* z = s.central->params();
  if (s.schedule.current().mode == IntraSync::average) {
    sma::mean(vectors.data(), k, s.scratch.data(), n);
    s.optimizer->step(z, s.scratch.data(), n, static_cast<float>(s.schedule.lr()));
    s.load_next = true;
  } else {
    sma::mean(vectors.data(), k, z, n);
  }
}

void borrow_learners(Self self, std::function<void()> next);

// The node goes on from where the running job is (it joined it, or was left behind): its
// schedule jumps to `at` (NodeSchedule::reposition). The model is already in z.
void reposition(Self self, const gossip::Position& at) {
  auto& s = self->state;
  const int64_t iteration = static_cast<int64_t>(at.iteration);
  s.schedule.reposition(iteration);
  s.exchanges = at.round;
  s.loss_sum = 0.0, s.loss_count = 0;
  const std::size_t n = s.central->param_count();
  std::copy(s.central->params(), s.central->params() + n, s.z_prev.data());
  s.load_next = true, s.z_stale = false;
  if (!s.joined_at_step) s.joined_at_step = iteration;
  spdlog::info("continuing from the running job at step {} (epoch {:.2f}, round {})", iteration,
               static_cast<double>(iteration * s.schedule.samples_per_iteration()) / s.schedule.epoch_samples(), at.round);
}

// Too few peers are left to go on: the node stops with a checkpoint of where it is (the
// order just done counted, z as before the exchange that could not happen), when it has a
// checkpoint folder, and says why.
void stop_with_too_few_peers(Self self, const std::string& why) {
  auto& s = self->state;
  s.schedule.complete_order();
  const std::string message = "the peers cannot go on: " + why;
  if (s.spec.checkpoint_dir.empty()) return fail(self, message);
  borrow_learners(self, [=] {
    auto& st = self->state;
    try {
      const std::string path = write_checkpoint(st.spec.checkpoint_dir, capture_node(st, st.loans), st.spec.checkpoint_keep);
      fail(self, message + "; checkpoint at step " + std::to_string(st.schedule.iteration()) + ": " + path);
    } catch (const std::exception& e) {
      fail(self, message + "; no checkpoint written: " + e.what());
    }
  });
}

// The exchange point after the order just done, not yet counted (`then` for an overlapped
// exchange, see Then); replicas take the mixed z at their next order. Only the time the node
// spends here counts as exchange time (overlapped: the wait for the mix, not the part hidden
// behind the learners' steps).
bool exchange_with_peers(Self self, bool measure, Then then) {
  auto& s = self->state;
  if (s.z_stale) combine(self);
  const auto start = Clock::now();
  const auto iteration = static_cast<uint64_t>(s.schedule.iteration() + s.schedule.current().steps);
  std::optional<gossip::Position> moved;
  try {
    moved = s.overlap ? mix_overlapped(s, measure, then, iteration) : mix_strictly(s, measure, iteration);
    if (then != Then::rest) s.compute_since_exchange = 0.0;
  } catch (const gossip::TooFewPeers& e) {
    stop_with_too_few_peers(self, e.what());
    return false;
  } catch (const std::exception& e) {
    fail(self, std::string("exchange with peers failed: ") + e.what());
    return false;
  }
  s.exchange_seconds += seconds_since(start);
  s.load_next = s.schedule.current().mode != IntraSync::sma;
  if (moved) reposition(self, *moved);
  return true;
}

void evaluate_central(Self self) {
  auto& s = self->state;
  if (s.z_stale) combine(self);  // independent replicas are averaged only to be judged or mixed
  const auto eval_start = Clock::now();
  const Evaluation eval = evaluate(*s.central, s.spec.train.learner.backend, s.test);
  s.eval_seconds += seconds_since(eval_start);
  const double train_seconds = seconds_since(s.start) - s.eval_seconds;
  EvalPoint point;
  point.step = s.schedule.iteration();
  point.epoch = s.schedule.epoch();
  point.wall_seconds = seconds_since(s.start);
  point.train_loss = s.loss_sum / std::max<int64_t>(1, s.loss_count);
  point.test_accuracy = eval.accuracy, point.test_loss = eval.loss;
  point.samples_per_second = s.schedule.samples() / std::max(train_seconds, 1e-9);
  point.samples = s.schedule.samples();
  point.compute_seconds = s.compute_seconds;
  point.exchange_seconds = s.exchange_seconds;
  point.wait_seconds = std::max(0.0, s.wait_seconds - s.exchange_seconds);
  if (s.exchange) {
    point.bytes_sent = s.exchange->bytes_sent() + s.bytes_sent_before;
    point.bytes_received = s.exchange->bytes_received() + s.bytes_received_before;
    point.consensus_distance = std::exchange(s.consensus_distance, std::nullopt);
    point.staleness = s.exchange->mean_staleness();
  }
  s.loss_sum = 0.0, s.loss_count = 0;
  if (!s.result.time_to_target_seconds && s.spec.train.target_accuracy > 0 &&
      eval.accuracy >= s.spec.train.target_accuracy)
    s.result.time_to_target_seconds = point.wall_seconds;
  s.result.history.push_back(point);
  self->send(s.metrics, point);
}

void tune(Self self, int64_t iteration_samples) {
  auto& t = self->state.autotune;
  t.window_samples += iteration_samples;
  ++t.window_iterations;
  const double elapsed = seconds_since(t.window_start);
  if (elapsed < self->state.spec.autotune_window_seconds || t.window_iterations < 20) return;
  const double rate = t.window_samples / elapsed;
  const int k = learner_count(self);
  const double threshold = self->state.spec.autotune_threshold;
  auto& log = self->state.autotune_log;
  if (t.best_rate == 0.0 || rate > t.best_rate * (1.0 + threshold)) {
    log.push_back(fmt::format("{} learner(s) give {:.0f} samples/s{}", k, rate,
                              k < self->state.spec.max_learners ? "; adding one" : "; at the maximum"));
    t.best_rate = rate;
    if (k < self->state.spec.max_learners) add_learner(self);
    else t.active = false;
  } else {
    log.push_back(fmt::format("{} learners give {:.0f} samples/s, not {:.0f}% above {:.0f}; settling on {}", k,
                              rate, threshold * 100, t.best_rate, k - 1));
    remove_last_learner(self);
    t.active = false;
  }
  spdlog::info("autotune: {}", log.back());
  t.window_start = Clock::now(), t.window_samples = 0, t.window_iterations = 0;
}

void start_iteration(Self self);

void iteration_finish(Self self);

// Before the first order: a peer starts with the others, or joins the running job and goes
// on from its position.
void begin_training(Self self) {
  auto& s = self->state;
  if (s.exchange) {
    try {
      const auto iteration = static_cast<uint64_t>(s.schedule.iteration());
      const auto at = s.overlap ? s.overlap->start(s.central->params(), iteration) : s.exchange->start(iteration);
      if (at) reposition(self, *at);
    } catch (const std::exception& e) {
      return fail(self, std::string("cannot join the peers: ") + e.what());
    }
  }
  start_iteration(self);
}

// Asks every learner to lend itself (they are between orders, so nothing else touches
// them), then runs `next` with s.loans filled.
void borrow_learners(Self self, std::function<void()> next) {
  auto& s = self->state;
  const int k = learner_count(self);
  s.loans.assign(static_cast<std::size_t>(k), nullptr);
  s.pending = k;
  for (int j = 0; j < k; ++j) {
    self->request(s.learners[static_cast<std::size_t>(j)], caf::infinite, lend_atom::value)
        .then(
            [=](const LearnerLoan& loan) {
              auto& st = self->state;
              st.loans[static_cast<std::size_t>(j)] = loan.learner;
              if (--st.pending == 0) next();
            },
            [=](caf::error& err) { fail(self, "learner " + std::to_string(j) + " was not lent: " + self->system().render(err)); });
  }
}

// Writes the checkpoint of this quiescent point and goes on. A checkpoint that cannot be
// written is reported and training continues: the previous ones are still there.
void checkpoint(Self self) {
  auto& s = self->state;
  try {
    const std::string path = write_checkpoint(s.spec.checkpoint_dir, capture_node(s, s.loans), s.spec.checkpoint_keep);
    spdlog::info("checkpoint at step {}: {}", s.schedule.iteration(), path);
  } catch (const std::exception& e) {
    spdlog::warn("checkpoint at step {} not written: {}", s.schedule.iteration(), e.what());
  }
  s.loans.clear();
  start_iteration(self);
}

// Puts the checkpoint's replicas back into the lent learners, then trains on.
void resume_learners(Self self) {
  auto& s = self->state;
  try {
    for (std::size_t j = 0; j < s.loans.size(); ++j) restore_learner(*s.loans[j], static_cast<int>(j), *s.resume);
  } catch (const std::exception& e) {
    return fail(self, "cannot resume from " + s.resumed_from + ": " + e.what());
  }
  s.loans.clear();
  s.resume.reset();
  const NodeSchedule& at = s.schedule;
  spdlog::info("continuing at step {} (epoch {:.2f}, {} learner(s)); {} steps to go", at.iteration(), at.epoch(),
               learner_count(self),
               (at.target_samples() - at.samples() + at.samples_per_iteration() - 1) / at.samples_per_iteration());
  self->send(s.metrics, s.result);
  begin_training(self);
}

// The SMA round, sliced: learner j averages slice j of z and of every replica, in parallel.
void average_in_slices(Self self) {
  auto& s = self->state;
  const int k = learner_count(self);
  const std::size_t n = s.central->param_count();
  SmaSlice slice;
  slice.z = s.central->params();
  slice.z_prev = s.z_prev.data();
  for (const auto& r : s.reports) slice.replicas.push_back(r.vector);
  slice.alpha = alpha(s, k);
  slice.momentum = static_cast<float>(s.spec.momentum);
  s.pending = k;
  for (int j = 0; j < k; ++j) {
    slice.lo = sma::slice_bound(n, k, j), slice.hi = sma::slice_bound(n, k, j + 1);
    self->request(s.learners[static_cast<std::size_t>(j)], caf::infinite, slice)
        .then([=](int) {
                if (--self->state.pending == 0) iteration_finish(self);
              },
              [=](caf::error& err) { fail(self, "SMA round failed: " + self->system().render(err)); });
  }
}

void iteration_done(Self self) {
  auto& s = self->state;
  const OrderPlan& plan = s.schedule.current();
  if (plan.sma == SmaRounds::by_node) return average_in_slices(self);
  if (plan.mode == IntraSync::average) combine(self);
  iteration_finish(self);
}

// The order's figures for the metrics: its loss, and how its time split into the mean
// learner's compute, the wait for the slowest learner and the node's own part.
void account_order(Self self) {
  auto& s = self->state;
  const int k = learner_count(self);
  const int64_t m = s.schedule.current().steps;
  double max_compute = 0.0, mean_compute = 0.0, loss = 0.0;
  for (const auto& r : s.reports) {
    max_compute = std::max(max_compute, r.compute_seconds);
    mean_compute += r.compute_seconds / k;
    loss += r.loss / k;
  }
  s.loss_sum += loss * m, s.loss_count += m;  // a mean over steps, however orders group them
  const double wall = seconds_since(s.iteration_start);
  IterationStats stats;
  stats.iteration = s.schedule.step();
  stats.total_iterations = s.schedule.total_steps();
  stats.epoch = s.schedule.epoch();
  stats.loss = loss;
  stats.samples_per_second = s.schedule.samples() / std::max(seconds_since(s.start) - s.eval_seconds, 1e-9);
  stats.compute_seconds = mean_compute;
  stats.imbalance_seconds = max_compute - mean_compute;
  stats.sync_seconds = std::max(0.0, wall - max_compute);
  s.compute_seconds += max_compute;
  s.mean_compute_seconds += mean_compute;
  s.wait_seconds += stats.sync_seconds;
  self->send(s.metrics, stats);
}

// The order is done: what its plan says follows it, then the next order.
void iteration_finish(Self self) {
  auto& s = self->state;
  const OrderPlan& plan = s.schedule.current();
  s.z_stale = plan.mode == IntraSync::none;
  double slowest = 0.0;
  for (const auto& r : s.reports) slowest = std::max(slowest, r.compute_seconds);
  s.compute_since_exchange += slowest;
  if (plan.exchange && !exchange_with_peers(self, plan.evaluate, *plan.exchange)) return;
  s.schedule.complete_order();
  account_order(self);
  if (plan.evaluate) {
    evaluate_central(self);
    s.schedule.evaluated();
  }
  if (s.autotune.active) tune(self, plan.steps * s.schedule.samples_per_iteration());
  if (plan.last) return finish(self);
  if (plan.checkpoint) return borrow_learners(self, [=] { checkpoint(self); });
  start_iteration(self);
}

void start_iteration(Self self) {
  auto& s = self->state;
  const int k = learner_count(self);
  const OrderPlan& plan = s.schedule.plan(s.autotune.active, s.overlap && s.overlap->pending());
  if (plan.lr_drop) spdlog::info("learning rate drops to {:g}: replicas reset to the central model", s.schedule.lr());
  StepOrder order;
  order.mode = plan.mode;
  order.lrs = s.schedule.learning_rates();
  if (plan.sma == SmaRounds::among_learners) {
    if (!s.group)
      s.group = std::make_shared<sma::SmaGroup>(s.central->params(), s.z_prev.data(), k, s.central->param_count(),
                                                alpha(s, k), static_cast<float>(s.spec.momentum));
    order.group = s.group;
    order.iteration = s.schedule.iteration();
    order.sync_every = s.spec.sync_every;
  }
  order.sync = plan.sma == SmaRounds::by_node;
  order.load = s.load_next || plan.lr_drop;
  order.reset_optimizer = plan.lr_drop;
  order.z = s.central->params();
  s.load_next = false;
  s.reports.assign(static_cast<std::size_t>(k), StepReport{});
  s.pending = k;
  s.iteration_start = Clock::now();
  for (int j = 0; j < k; ++j) {
    self->request(s.learners[static_cast<std::size_t>(j)], caf::infinite, order)
        .then(
            [=](const StepReport& report) {
              auto& st = self->state;
              st.reports[static_cast<std::size_t>(j)] = report;
              if (--st.pending == 0) iteration_done(self);
            },
            [=](caf::error& err) {
              const auto& ctx = err.context();
              fail(self, ctx.match_elements<std::string>() ? ctx.get_as<std::string>(0)
                                                            : "learner " + std::to_string(j) + " failed: " +
                                                                  self->system().render(err));
            });
  }
}

}  // namespace

caf::behavior node_actor(caf::stateful_actor<NodeState>* self, NodeSpec spec, Dataset train, Dataset test,
                         caf::actor metrics, std::shared_ptr<const Checkpoint> resume, std::string resumed_from) {
  auto& s = self->state;
  s.spec = spec;
  s.train = std::move(train);
  s.test = std::move(test);
  s.metrics = std::move(metrics);
  s.central = std::make_unique<Model>(spec.train.learner.model);
  s.central->init(spec.train.learner.seed);
  const std::size_t n = s.central->param_count();
  s.z_prev.resize(n);
  std::copy(s.central->params(), s.central->params() + n, s.z_prev.data());
  s.scratch.resize(n);
  s.optimizer = make_optimizer(n, spec.train.learner.optimizer);
  // Each peer trains on its shard, so an epoch of the whole set is train.size() / peers per peer.
  s.schedule = NodeSchedule(spec, static_cast<int64_t>(s.train.size()) / peer_count(spec));
  s.autotune.active = spec.learners == 0;
  int learners = std::max(1, spec.learners);
  if (resume) {
    try {
      learners = restore_node(s, *resume);
      s.resume = std::move(resume);
      s.resumed_from = std::move(resumed_from);
      s.resumed_from_step = s.schedule.iteration();
    } catch (const std::exception& e) {
      s.startup_error = "cannot resume from " + resumed_from + ": " + e.what();  // reported to `run`
    }
  }
  if (spec.overlap && spec.exchange.mode == gossip::ExchangeMode::async_gossip)
    s.startup_error = "exchange.overlap: async-gossip is asynchronous already";  // reported to `run`
  else if (spec.exchange.mode != gossip::ExchangeMode::none) {
    try {
      gossip::ExchangeSpec exchange = spec.exchange;
      exchange.first_round = s.exchanges;  // a resumed peer's rounds go on where they were
      exchange.tensor_sizes = s.central->tensor_sizes();
      if (spec.overlap) {
        s.overlap = std::make_unique<gossip::OverlappedExchange>(exchange, n);
        s.exchange = &s.overlap->peers();
      } else {
        s.strict_exchange = std::make_unique<gossip::PeerExchange>(exchange, protocols::Span<float>{s.central->params(), n});
        s.exchange = s.strict_exchange.get();
        s.z_before.resize(n);
      }
    } catch (const std::exception& e) {
      s.startup_error = std::string("cannot join the peers: ") + e.what();  // reported to `run`
    }
  }
  const bool load_next = s.load_next;  // a resumed node's replicas may be off z on purpose (SMA)
  for (int j = 0; j < learners; ++j) add_learner(self);
  s.load_next = load_next;
  self->set_down_handler([=](const caf::down_msg& down) {
    fail(self, "a learner stopped unexpectedly: " + self->system().render(down.reason));
  });
  return {
      [=](run_atom) {
        self->state.done = self->make_response_promise();
        if (!self->state.startup_error.empty()) {
          fail(self, self->state.startup_error);
          return self->state.done;
        }
        if (!self->state.resume) self->state.start = Clock::now();  // else it continues the checkpoint's
        self->state.autotune.window_start = Clock::now();
        if (self->state.resume) borrow_learners(self, [=] { resume_learners(self); });
        else begin_training(self);
        return self->state.done;
      },
  };
}

}  // namespace starling::actors
