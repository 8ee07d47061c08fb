#include "actors/node_report.h"


#include <algorithm>
#include <utility>

namespace starling::actors {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

IterationStats account_order(NodeState& s) {
  const int k = static_cast<int>(s.learners.size());
  const int64_t m = s.schedule.current().steps;
  double max_compute = 0.0, mean_compute = 0.0, loss = 0.0;
  for (const auto& r : s.reports) {
    max_compute = std::max(max_compute, r.compute_seconds);
    mean_compute += r.compute_seconds / k;
    loss += r.loss / k;
  }
  RunTotals& t = s.totals;
  t.loss_sum += loss * m, t.loss_count += m;  // a mean over steps, however orders group them
  const double wall = seconds_since(t.order_start);
  IterationStats stats;
  stats.iteration = s.schedule.step();
  stats.total_iterations = s.schedule.total_steps();
  stats.epoch = s.schedule.epoch();
  stats.loss = loss;
  stats.samples_per_second = s.schedule.samples() / std::max(seconds_since(t.start) - t.eval_seconds, 1e-9);
  stats.compute_seconds = mean_compute;
  stats.imbalance_seconds = max_compute - mean_compute;
  stats.sync_seconds = std::max(0.0, wall - max_compute);
  t.compute_seconds += max_compute;
  t.mean_compute_seconds += mean_compute;
  t.wait_seconds += stats.sync_seconds;
  t.last_order = stats;
  return stats;
}

EvalPoint record_evaluation(NodeState& s, const Evaluation& eval) {
  RunTotals& t = s.totals;
  const double train_seconds = seconds_since(t.start) - t.eval_seconds;
  EvalPoint point;
  point.step = s.schedule.iteration();
  point.epoch = s.schedule.epoch();
  point.wall_seconds = seconds_since(t.start);
  point.train_loss = t.loss_sum / std::max<int64_t>(1, t.loss_count);
  point.test_accuracy = eval.accuracy, point.test_loss = eval.loss;
  point.samples_per_second = s.schedule.samples() / std::max(train_seconds, 1e-9);
  point.samples = s.schedule.samples();
  point.compute_seconds = t.compute_seconds;
  point.exchange_seconds = t.exchange_seconds;
  point.wait_seconds = std::max(0.0, t.wait_seconds - t.exchange_seconds);
  point.bytes_sent = s.peers.bytes_sent(), point.bytes_received = s.peers.bytes_received();
  if (s.peers.exchange) {
    point.consensus_distance = std::exchange(s.peers.consensus_distance, std::nullopt);
    point.staleness = s.peers.exchange->mean_staleness();
  }
  t.loss_sum = 0.0, t.loss_count = 0;
  if (!s.result.time_to_target_seconds && s.spec.train.target > 0 && s.task->reached(eval, s.spec.train.target))
    s.result.time_to_target_seconds = point.wall_seconds;
  s.result.history.push_back(point);
  return point;
}

NodeSnapshot node_snapshot(NodeState& s, bool final) {
  const RunTotals& t = s.totals;
  s.totals.last_snapshot = Clock::now();
  NodeSnapshot out;
  out.step = t.last_order.iteration, out.total_steps = t.last_order.total_iterations;
  out.epoch = t.last_order.epoch, out.loss = t.last_order.loss;
  out.samples_per_second = t.last_order.samples_per_second;
  out.learners = static_cast<int>(s.learners.size());
  out.sync_every = s.schedule.sync_every();
  out.wall_seconds = seconds_since(t.start);
  out.compute_seconds = t.mean_compute_seconds;
  out.exchange_seconds = t.exchange_seconds;
  out.wait_seconds = std::max(0.0, t.wait_seconds - t.exchange_seconds);
  out.final = final;
  out.peers_read = !s.peers.mix_in_flight();
  if (s.peers.exchange && out.peers_read) {
    out.peers = s.peers.exchange->peer_status();
    out.drops = s.peers.exchange->drops();
    out.members = s.peers.exchange->members();
    out.view_changes = s.peers.exchange->view_changes();
    out.neighbours = s.peers.exchange->neighbour_stats();
    if (const gossip::StateCheck check = s.peers.exchange->state_check(); !check.recent.empty())
      out.state_digest = check.recent.back();
  }
  return out;
}

bool snapshot_due(const NodeState& s) {
  return s.spec.on_snapshot && seconds_since(s.totals.last_snapshot) >= s.spec.snapshot_every;
}

NodeResult node_result(NodeState& s, const std::vector<LearnerSpec>& learners) {
  const RunTotals& t = s.totals;
  s.result.steps = s.schedule.iteration(), s.result.samples = s.schedule.samples();
  s.result.wall_seconds = seconds_since(t.start);
  s.result.train_seconds = s.result.wall_seconds - t.eval_seconds;
  s.result.model_checksum = checksum_hex(s.central->params(), s.central->param_count());
  NodeResult out;
  out.train = s.result;
  out.learners = static_cast<int>(learners.size());
  out.autotune_log = s.autotune.tuner.log();
  out.intra_sync = s.schedule.intra_sync(), out.sync_every = s.schedule.sync_every();
  out.exchange_seconds = t.exchange_seconds;
  out.overlapped_seconds = s.peers.overlap ? s.peers.overlap->overlapped_seconds() : 0.0;
  out.compute_seconds = t.mean_compute_seconds;
  out.imbalance_seconds = std::max(0.0, t.compute_seconds - t.mean_compute_seconds);
  out.sync_seconds = t.wait_seconds;
  out.bytes_sent = s.peers.bytes_sent(), out.bytes_received = s.peers.bytes_received();
  if (s.peers.exchange) {
    out.control_messages_sent = s.peers.exchange->control_messages_sent();
    out.control_messages_received = s.peers.exchange->control_messages_received();
  }
  out.resumed_from = s.resume.file;
  out.resumed_from_step = s.resume.step;
  out.joined_at_step = s.peers.joined_at_step;
  out.label_counts = s.task->label_counts(learners);
  if (s.peers.exchange) {
    out.drops = s.peers.exchange->drops();
    out.neighbours = s.peers.exchange->neighbour_stats();
    out.view_changes = s.peers.exchange->view_changes();
    out.state_check = s.peers.exchange->state_check();
    out.members = s.peers.exchange->members();
  }
  return out;
}

}  // namespace starling::actors
