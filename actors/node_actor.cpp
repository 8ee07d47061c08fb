#include "actors/node_actor.h"

#include "actors/learner_actor.h"
#include "actors/node_checkpoint.h"
#include "actors/node_report.h"
#include "learners/data/sampler.h"
#include "learners/replicas/sma.h"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <cmath>

namespace starling::actors {
namespace {

using Self = caf::stateful_actor<NodeState>*;

constexpr const char* kNoGradientJoin =
    "a peer that averages gradients (exchange.average = \"gradients\") cannot join a running job or be moved to "
    "where it is: its peers start together";

int learner_count(Self self) { return static_cast<int>(self->state.learners.size()); }

int peer_count(const NodeSpec& spec) {
  return spec.exchange.mode == gossip::ExchangeMode::none ? 1 : std::max<int>(1, static_cast<int>(spec.exchange.peers.size()));
}

// The parts the training set is split into, and this peer's: one per peer of the job, or a
// swarm's fixed count (NodeSpec::data_parts).
std::pair<int, int> data_share(const NodeSpec& spec) {
  if (spec.data_parts > 0) return {spec.data_parts, spec.data_part};
  return {peer_count(spec), spec.exchange.rank};
}

// Every learner draws its own data: an image learner with a fixed learner count its own
// shard; while auto-tuning the count is not known in advance, so every image learner draws
// from the whole set (or the peer's part) in its own order. Under a partition the peer's part
// is the pool the learners share. A text learner draws its own windows from its index within
// its peer's stream.
LearnerSpec learner_spec(const NodeState& s, int index) {
  LearnerSpec spec = s.spec.train.learner;
  const auto [parts, mine] = data_share(s.spec);
  const int peers = s.spec.part ? 1 : parts;
  const int rank = peers > 1 ? mine : 0;
  spec.learner = index;
  spec.stream = parts > 1 ? static_cast<uint64_t>(mine) : 0;
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
                     ? self->spawn<caf::detached>(learner_actor, index, learner_spec(s, index), s.task, s.spec.slowdown)
                     : self->spawn(learner_actor, index, learner_spec(s, index), s.task, s.spec.slowdown);
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

std::vector<LearnerSpec> learner_specs(Self self) {
  std::vector<LearnerSpec> specs;
  for (int i = 0; i < learner_count(self); ++i) specs.push_back(learner_spec(self->state, i));
  return specs;
}

void evaluate_central(Self self);

void finish(Self self) {
  auto& s = self->state;
  if (s.result.history.empty()) evaluate_central(self);  // joined at the job's end, or resumed there
  if (s.peers.overlap)
    spdlog::info("exchange beside the compute: the mixes took {:.2f} s, the node waited {:.2f} s in the exchange",
                 s.peers.overlap->overlapped_seconds(), s.totals.exchange_seconds);
  if (s.peers.exchange) {
    try {
      s.peers.exchange->finish();
    } catch (const std::exception& e) {
      spdlog::warn("leaving the peers: {}", e.what());
    }
  }
  if (s.spec.on_snapshot) self->send(s.metrics, node_snapshot(s, true));
  s.done.deliver(node_result(s, learner_specs(self)));
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

// Sends every learner j the message `message_to(j)` and hands its reply to `take(j, reply)`;
// once all have answered, `next()`. A learner's error fails the node with `why(j, error)`.
template <class Reply, class MessageTo, class Take, class Next, class Why>
void ask_learners(Self self, MessageTo message_to, Take take, Next next, Why why) {
  auto& s = self->state;
  s.replies_due = learner_count(self);
  for (int j = 0; j < learner_count(self); ++j)
    self->request(s.learners[static_cast<std::size_t>(j)], caf::infinite, message_to(j))
        .then(
            [=](const Reply& reply) {
              take(j, reply);
              if (--self->state.replies_due == 0) next();
            },
            [=](caf::error& err) { fail(self, why(j, err)); });
}

// Asks every learner to lend itself (they are between orders, so nothing else touches
// them), then runs `next` with s.loans filled.
void borrow_learners(Self self, std::function<void()> next) {
  self->state.loans.assign(self->state.learners.size(), nullptr);
  ask_learners<LearnerLoan>(
      self, [](int) { return lend_atom::value; },
      [=](int j, const LearnerLoan& loan) { self->state.loans[static_cast<std::size_t>(j)] = loan.learner; }, next,
      [=](int j, const caf::error& err) {
        return "learner " + std::to_string(j) + " was not lent: " + self->system().render(err);
      });
}

// The mean of the vectors the learners reported into `out`; false when they reported none.
bool mean_of_reports(NodeState& s, float* out) {
  std::vector<const float*> vectors;
  for (const auto& r : s.reports)
    if (r.vector) vectors.push_back(r.vector);
  if (vectors.empty()) return false;
  sma::mean(vectors.data(), static_cast<int>(vectors.size()), out, s.central->param_count());
  return true;
}

// Independent replicas are averaged into z. SMA has its own sliced round, synchronous SGD
// its step on the mean gradient.
void combine(Self self) {
  auto& s = self->state;
  s.z_stale = false;
  mean_of_reports(s, s.central->params());
}

// The node goes on from where the running job is (it joined it, or was left behind): its
// schedule jumps to `at` (NodeSchedule::reposition). The model is already in z.
void reposition(Self self, const gossip::Position& at) {
  auto& s = self->state;
  const int64_t iteration = static_cast<int64_t>(at.iteration);
  s.schedule.reposition(iteration);
  s.peers.exchanges = at.round;
  s.totals.loss_sum = 0.0, s.totals.loss_count = 0;
  const std::size_t n = s.central->param_count();
  std::copy(s.central->params(), s.central->params() + n, s.z_prev.data());
  s.load_next = true, s.z_stale = false, s.restart_learners = true;
  const double epoch = static_cast<double>(iteration * s.schedule.samples_per_iteration()) / s.schedule.epoch_samples();
  if (at.caught_up)
    return spdlog::debug("caught up with the job at step {} (epoch {:.2f}, round {})", iteration, epoch, at.round);
  if (!s.peers.joined_at_step) s.peers.joined_at_step = iteration;
  spdlog::info("continuing from the running job at step {} (epoch {:.2f}, round {})", iteration, epoch, at.round);
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

// Runs `round` with the peers, its time counted as exchange time. False when the node has
// stopped: too few peers are left (stop_with_too_few_peers), or the round failed (`what`).
template <class Round>
bool with_peers(Self self, const char* what, Round round) {
  const auto start = Clock::now();
  try {
    round();
  } catch (const gossip::TooFewPeers& e) {
    stop_with_too_few_peers(self, e.what());
    return false;
  } catch (const std::exception& e) {
    fail(self, std::string(what) + e.what());
    return false;
  }
  self->state.totals.exchange_seconds += seconds_since(start);
  return true;
}

// The exchange point after the order just done, not yet counted (`then` for an overlapped
// exchange, see Then); replicas take the mixed z at their next order. Only the time the node
// spends here counts as exchange time (overlapped: the wait for the mix, not the part hidden
// behind the learners' steps).
bool exchange_with_peers(Self self, bool measure, Then then) {
  auto& s = self->state;
  if (s.z_stale) combine(self);
  const auto iteration = static_cast<uint64_t>(s.schedule.iteration() + s.schedule.current().steps);
  std::optional<gossip::Position> moved;
  const bool mixed = with_peers(self, "exchange with peers failed: ", [&] {
    moved = s.peers.overlap ? mix_overlapped(s, measure, then, iteration) : mix_strictly(s, measure, iteration);
    if (then != Then::rest) s.peers.compute_since_exchange = 0.0;
  });
  if (!mixed) return false;
  s.load_next = s.schedule.current().mode != IntraSync::sma;
  if (moved) reposition(self, *moved);
  return true;
}

void evaluate_central(Self self) {
  auto& s = self->state;
  if (s.z_stale) combine(self);  // independent replicas are averaged only to be judged or mixed
  const auto eval_start = Clock::now();
  const Evaluation eval = s.task->evaluate(*s.central, s.spec.train.learner.backend);
  s.totals.eval_seconds += seconds_since(eval_start);
  self->send(s.metrics, record_evaluation(s, eval));
}

// Trains on with `next` from the next order on. Replicas that trained independently are
// averaged into z first and every replica restarts from it, with no momentum of z carried
// over: SMA's correction assumes replicas near z.
void apply_averaging(Self self, const Averaging& next) {
  auto& s = self->state;
  if (s.z_stale && !(next == Averaging{learner_count(self), s.schedule.intra_sync(), s.schedule.sync_every()})) {
    combine(self);
    std::copy(s.central->params(), s.central->params() + s.central->param_count(), s.z_prev.data());
    s.load_next = true;
  }
  while (learner_count(self) < next.learners) add_learner(self);
  while (learner_count(self) > next.learners) remove_last_learner(self);
  s.schedule.set_averaging(next.mode, next.sync_every);
}

// Counts the order just done into the tuner's window; a full window (long enough and of
// enough iterations to be more than noise) is the current trial's rate.
void tune(Self self, int64_t order_samples, int64_t order_iterations) {
  auto& t = self->state.autotune;
  t.window_samples += order_samples;
  t.window_iterations += order_iterations;
  // An evaluation in the window is no trial's cost.
  const double elapsed = seconds_since(t.window_start) - (self->state.totals.eval_seconds - t.window_eval_seconds);
  if (elapsed < self->state.spec.autotune_window_seconds || t.window_iterations < 20) return;
  const std::size_t logged = t.tuner.log().size();
  t.tuner.record(t.window_samples / elapsed);
  for (std::size_t i = logged; i < t.tuner.log().size(); ++i) spdlog::info("autotune: {}", t.tuner.log()[i]);
  apply_averaging(self, t.tuner.trial());
  t.window_start = Clock::now(), t.window_samples = 0, t.window_iterations = 0;
  t.window_eval_seconds = self->state.totals.eval_seconds;
}

void start_order(Self self);

// Before the first order: a peer starts with the others, or joins the running job and goes
// on from its position. A fresh start may first mix the models as drawn (exchange_at_start).
void begin_training(Self self) {
  auto& s = self->state;
  // Resumed from the checkpoint after the last iteration, or joined at the job's end.
  const auto train_or_finish = [self] {
    auto& st = self->state;
    if (st.schedule.samples() >= st.schedule.target_samples()) return finish(self);
    start_order(self);
  };
  if (!s.peers.exchange) return train_or_finish();
  const auto iteration = static_cast<uint64_t>(s.schedule.iteration());
  std::optional<gossip::Position> at;
  try {
    at = s.peers.overlap ? s.peers.overlap->start(s.central->params(), iteration) : s.peers.exchange->start(iteration);
  } catch (const std::exception& e) {
    return fail(self, std::string("cannot join the peers: ") + e.what());
  }
  if (at && s.spec.average_gradients) return fail(self, kNoGradientJoin);
  if (at) reposition(self, *at);
  const bool fresh = !at && iteration == 0 && s.resume.file.empty();
  // A peer that joined before the job's first round (a swarm's first members) takes part
  // in the start's round as the peers it joined do: it is the job's round 0.
  const bool before_first_round = at && at->iteration == 0 && at->round == 0;
  if ((fresh || before_first_round) && s.spec.exchange_at_start && !s.spec.average_gradients) {
    const bool load_next = s.load_next;  // the replicas take the mixed z at their first order
    if (!exchange_with_peers(self, false, Then::strict)) return;
    s.load_next = load_next || s.load_next;
  }
  train_or_finish();
}

// Writes the checkpoint of this quiescent point and goes on. A checkpoint that cannot be
// written is reported and training continues: the previous ones are still there.
void checkpoint(Self self) {
  auto& s = self->state;
  if (s.z_stale) combine(self);  // the checkpoint's z is the node's model, which `starling generate` reads
  try {
    const std::string path = write_checkpoint(s.spec.checkpoint_dir, capture_node(s, s.loans), s.spec.checkpoint_keep);
    spdlog::info("checkpoint at step {}: {}", s.schedule.iteration(), path);
  } catch (const std::exception& e) {
    spdlog::warn("checkpoint at step {} not written: {}", s.schedule.iteration(), e.what());
  }
  s.loans.clear();
  if (s.schedule.current().last) return finish(self);
  start_order(self);
}

// Puts the checkpoint's replicas back into the lent learners, then trains on.
void resume_learners(Self self) {
  auto& s = self->state;
  try {
    for (std::size_t j = 0; j < s.loans.size(); ++j)
      restore_learner(*s.loans[j], static_cast<int>(j), *s.resume.checkpoint);
  } catch (const std::exception& e) {
    return fail(self, "cannot resume from " + s.resume.file + ": " + e.what());
  }
  s.loans.clear();
  s.resume.checkpoint.reset();
  spdlog::info("continuing at step {} (epoch {:.2f}, {} learner(s)); {} steps to go", s.schedule.iteration(),
               s.schedule.epoch(), learner_count(self), s.schedule.iterations_left());
  self->send(s.metrics, s.result);
  begin_training(self);
}

// The order and its SMA round are done: what its plan says follows it, then the next order.
void finish_order(Self self) {
  auto& s = self->state;
  const OrderPlan& plan = s.schedule.current();
  s.z_stale = plan.mode == IntraSync::none;
  double slowest = 0.0;
  for (const auto& r : s.reports) slowest = std::max(slowest, r.compute_seconds);
  s.peers.compute_since_exchange += slowest;
  if (plan.exchange && !exchange_with_peers(self, plan.evaluate, *plan.exchange)) return;
  s.schedule.complete_order();
  self->send(s.metrics, account_order(s));
  if (snapshot_due(s)) self->send(s.metrics, node_snapshot(s, false));
  if (plan.evaluate) {
    evaluate_central(self);
    s.schedule.evaluated();
  }
  if (s.autotune.tuner.active()) tune(self, plan.steps * s.schedule.samples_per_iteration(), plan.steps);
  if (plan.checkpoint) return borrow_learners(self, [=] { checkpoint(self); });
  if (plan.last) return finish(self);
  start_order(self);
}

// The SMA round, sliced: learner j averages slice j of z and of every replica, in parallel.
void average_in_slices(Self self) {
  auto& s = self->state;
  std::vector<float*> replicas;
  for (const auto& r : s.reports) replicas.push_back(r.vector);
  const auto shares = sma::slices(s.central->params(), s.z_prev.data(), replicas, s.central->param_count(),
                                  sma::alpha_for(s.spec.alpha, learner_count(self)), static_cast<float>(s.spec.momentum));
  ask_learners<int>(
      self, [&](int j) { return shares[static_cast<std::size_t>(j)]; }, [](int, int) {}, [=] { finish_order(self); },
      [=](int, const caf::error& err) { return "SMA round failed: " + self->system().render(err); });
}

// Synchronous SGD's step: z steps on the learners' mean gradient, averaged first with the
// other peers' when the peers average gradients; the replicas take z at their next order.
// False when the node has stopped.
bool step_on_mean_gradient(Self self) {
  auto& s = self->state;
  if (!mean_of_reports(s, s.scratch.data())) return true;
  if (s.spec.average_gradients && !with_peers(self, "gradient all-reduce failed: ", [&] {
        if (s.peers.exchange->exchange(static_cast<uint64_t>(s.schedule.iteration() + 1)))
          throw std::runtime_error(kNoGradientJoin);
        ++s.peers.exchanges;
      }))
    return false;
  shared_optimizer(s).step(s.central->params(), s.scratch.data(), s.central->param_count(), static_cast<float>(s.schedule.lr()));
  s.load_next = true;
  return true;
}

// Every learner has reported: the node's SMA round or synchronous SGD's step, if any.
void order_reported(Self self) {
  const OrderPlan& plan = self->state.schedule.current();
  if (plan.sma == SmaRounds::by_node) return average_in_slices(self);
  if (plan.mode == IntraSync::average && !step_on_mean_gradient(self)) return;
  finish_order(self);
}

// A learner's failure comes back as its own message when it has one (learner_actor).
std::string why_the_order_failed(Self self, int j, const caf::error& err) {
  const auto& context = err.context();
  if (context.match_elements<std::string>()) return context.get_as<std::string>(0);
  return "learner " + std::to_string(j) + " failed: " + self->system().render(err);
}

void start_order(Self self) {
  auto& s = self->state;
  const int k = learner_count(self);
  const OrderPlan& plan = s.schedule.plan(s.autotune.tuner.active(), s.peers.mix_in_flight());
  if (plan.lr_drop) spdlog::info("learning rate drops to {:g}: replicas reset to the central model", s.schedule.lr());
  StepOrder order;
  order.mode = plan.mode;
  order.lrs = s.schedule.learning_rates();
  if (plan.sma == SmaRounds::among_learners) {
    if (!s.group)
      s.group = std::make_shared<sma::SmaGroup>(s.central->params(), s.z_prev.data(), k, s.central->param_count(),
                                                sma::alpha_for(s.spec.alpha, k), static_cast<float>(s.spec.momentum));
    order.group = s.group;
    order.iteration = s.schedule.iteration();
    order.sync_every = s.schedule.sync_every();
  }
  order.sync = plan.sma == SmaRounds::by_node;
  order.load = s.load_next || plan.lr_drop;
  order.reset_optimizer = plan.lr_drop;
  if (s.restart_learners) order.restart_at = s.schedule.iteration();
  order.z = s.central->params();
  s.load_next = false, s.restart_learners = false;
  s.reports.assign(static_cast<std::size_t>(k), StepReport{});
  s.totals.order_start = Clock::now();
  ask_learners<StepReport>(
      self, [&](int) { return order; },
      [=](int j, const StepReport& report) { self->state.reports[static_cast<std::size_t>(j)] = report; },
      [=] { order_reported(self); }, [=](int j, const caf::error& err) { return why_the_order_failed(self, j, err); });
}

// The central model z (and z_prev, its value before the last SMA round) starts where every
// learner's replica does.
void set_up_central(NodeState& s) {
  s.central = std::make_unique<Model>(s.spec.train.learner.model);
  s.central->init(s.spec.train.learner.seed);
  const std::size_t n = s.central->param_count();
  s.z_prev.resize(n);
  std::copy(s.central->params(), s.central->params() + n, s.z_prev.data());
  s.scratch.resize(n);
}

// Connects to the peers; a resumed peer's rounds and exchange state go on where they were.
// A failure is kept for `run` to report.
void connect_peers(NodeState& s) {
  const NodeSpec& spec = s.spec;
  if (spec.overlap && spec.exchange.mode == gossip::ExchangeMode::async_gossip) {
    s.startup_error = "exchange.overlap: async-gossip is asynchronous already";
    return;
  }
  if (spec.exchange.mode == gossip::ExchangeMode::none) return;
  const std::size_t n = s.central->param_count();
  NodePeers& p = s.peers;
  try {
    gossip::ExchangeSpec exchange = spec.exchange;
    exchange.first_round = p.exchanges;
    exchange.tensor_sizes = s.central->tensor_sizes();
    if (spec.overlap) {
      p.overlap = std::make_unique<gossip::OverlappedExchange>(exchange, n);
      p.exchange = &p.overlap->peers();
    } else {
      // Averaging gradients, the exchange works on the mean gradient, before the optimizer's step.
      float* mixed = spec.average_gradients ? s.scratch.data() : s.central->params();
      p.strict_exchange = std::make_unique<gossip::PeerExchange>(exchange, protocols::Span<float>{mixed, n});
      p.exchange = p.strict_exchange.get();
      p.z_before.resize(n);
    }
    if (s.resume.exchange) p.exchange->resume(std::move(*s.resume.exchange));
  } catch (const std::exception& e) {
    s.startup_error = std::string("cannot join the peers: ") + e.what();
  }
}

// Puts the checkpoint's node part back; returns the learner count it was taken with. A
// failure is kept for `run` to report.
int restore_from(NodeState& s, std::shared_ptr<const Checkpoint> checkpoint, std::string file) {
  try {
    const int learners = restore_node(s, *checkpoint);
    s.resume.checkpoint = std::move(checkpoint);
    s.resume.file = file;
    s.resume.step = s.schedule.iteration();
    return learners;
  } catch (const std::exception& e) {
    s.startup_error = "cannot resume from " + file + ": " + e.what();
    return std::max(1, s.spec.learners);
  }
}

}  // namespace

caf::behavior node_actor(caf::stateful_actor<NodeState>* self, NodeSpec spec, std::shared_ptr<const Task> task,
                         caf::actor metrics, std::shared_ptr<const Checkpoint> resume, std::string resumed_from) {
  auto& s = self->state;
  s.spec = spec;
  s.task = std::move(task);
  s.metrics = std::move(metrics);
  set_up_central(s);
  s.schedule = NodeSchedule(spec, s.task->epoch_samples(data_share(spec).first));
  if (spec.learners == 0)
    s.autotune.tuner = LearnerTuner({1, spec.intra_sync, spec.sync_every}, spec.max_learners, spec.autotune_threshold);
  const int learners =
      resume ? restore_from(s, std::move(resume), std::move(resumed_from)) : std::max(1, spec.learners);
  connect_peers(s);
  const bool load_next = s.load_next;  // a resumed node's replicas may be off z on purpose (SMA)
  for (int j = 0; j < learners; ++j) add_learner(self);
  s.load_next = load_next;
  self->set_down_handler([=](const caf::down_msg& down) {
    fail(self, "a learner stopped unexpectedly: " + self->system().render(down.reason));
  });
  return {
      [=](run_atom) {
        auto& st = self->state;
        st.done = self->make_response_promise();
        if (!st.startup_error.empty()) {
          fail(self, st.startup_error);
          return st.done;
        }
        if (!st.resume.checkpoint) st.totals.start = Clock::now();  // else it continues the checkpoint's
        st.autotune.window_start = Clock::now();
        st.autotune.window_eval_seconds = st.totals.eval_seconds;
        if (st.resume.checkpoint) borrow_learners(self, [=] { resume_learners(self); });
        else begin_training(self);
        return st.done;
      },
  };
}

}  // namespace starling::actors
