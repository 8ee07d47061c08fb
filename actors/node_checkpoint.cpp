#include "actors/node_checkpoint.h"

#include "actors/exchange_section.h"
#include "learners/replicas/history_section.h"

#include <chrono>

namespace starling::actors {
namespace {

std::string learner_section(int index) { return "learner." + std::to_string(index); }

}  // namespace

Fingerprint node_fingerprint(const NodeSpec& spec, const Model& model, const Task& task) {
  const bool peers = spec.exchange.mode != gossip::ExchangeMode::none;
  return {
      {"model", spec.train.learner.model.kind + " " + model.signature()},
      {"parameters", std::to_string(model.param_count())},
      {"learners", spec.learners > 0 ? std::to_string(spec.learners) : "auto"},
      {"intra_sync", intra_sync_name(spec.intra_sync)},
      {"optimizer", spec.train.learner.optimizer.kind},
      {"batch", std::to_string(spec.train.learner.batch)},
      {"train_samples", std::to_string(task.train_samples())},
      {"exchange", std::string(gossip::exchange_mode_name(spec.exchange.mode))},
      {"peers", std::to_string(peers ? spec.exchange.peers.size() : 1)},
      {"rank", std::to_string(peers ? spec.exchange.rank : 0)},
  };
}

Checkpoint capture_node(NodeState& s, const std::vector<Learner*>& learners) {
  Checkpoint c;
  c.step = static_cast<uint64_t>(s.schedule.iteration());
  c.fingerprint = node_fingerprint(s.spec, *s.central, *s.task);
  const std::size_t n = s.central->param_count();

  SectionWriter node;
  const ScheduleCounters counters = s.schedule.counters();
  const RunTotals& t = s.totals;
  node.put(counters.iteration).put(counters.samples).put(counters.next_eval_samples);
  node.put(t.loss_count).put(t.loss_sum).put(counters.lr);
  node.put<uint8_t>(s.load_next).put<uint8_t>(s.z_stale);
  node.put(std::chrono::duration<double>(Clock::now() - t.start).count()).put(t.eval_seconds);
  node.put(t.exchange_seconds).put(t.compute_seconds).put(t.mean_compute_seconds).put(t.wait_seconds);
  node.put(s.peers.compute_since_exchange).put(s.peers.exchanges);
  node.put<uint64_t>(s.peers.bytes_sent()).put<uint64_t>(s.peers.bytes_received());
  node.put<int32_t>(static_cast<int32_t>(learners.size()));
  node.put<uint8_t>(static_cast<uint8_t>(s.schedule.intra_sync())).put<int32_t>(s.schedule.sync_every());
  s.autotune.tuner.save(node);
  put_optional(node, s.result.time_to_target_seconds);
  c.add("node", node.take());

  SectionWriter history;
  put_history(history, s.result.history);
  c.add("history", history.take());

  c.add("central", SectionWriter().floats(s.central->params(), n).take());
  c.add("central_prev", SectionWriter().floats(s.z_prev.data(), n).take());
  if (s.optimizer) {  // none: the shared model has not stepped, and a resumed run makes a fresh one
    SectionWriter optimizer;
    s.optimizer->save(optimizer);
    c.add("shared_optimizer", optimizer.take());
  }

  if (s.peers.exchange) put_exchange_state(c, s.peers.exchange->algorithm_state());
  for (std::size_t j = 0; j < learners.size(); ++j) {
    SectionWriter out;
    learners[j]->save(out);
    c.add(learner_section(static_cast<int>(j)), out.take());
  }
  return c;
}

int restore_node(NodeState& s, const Checkpoint& in) {
  const std::size_t n = s.central->param_count();
  SectionReader node = in.reader("node");
  ScheduleCounters counters;
  counters.iteration = node.get<int64_t>(), counters.samples = node.get<int64_t>();
  counters.next_eval_samples = node.get<int64_t>();
  RunTotals& t = s.totals;
  t.loss_count = node.get<int64_t>(), t.loss_sum = node.get<double>(), counters.lr = node.get<double>();
  s.load_next = node.get<uint8_t>() != 0, s.z_stale = node.get<uint8_t>() != 0;
  // Reported times continue from the checkpoint's; the time the run was down is not counted.
  t.start = Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(node.get<double>()));
  t.eval_seconds = node.get<double>();
  t.exchange_seconds = node.get<double>(), t.compute_seconds = node.get<double>();
  t.mean_compute_seconds = node.get<double>(), t.wait_seconds = node.get<double>();
  s.peers.compute_since_exchange = node.get<double>(), s.peers.exchanges = node.get<uint64_t>();
  s.peers.bytes_sent_before = node.get<uint64_t>(), s.peers.bytes_received_before = node.get<uint64_t>();
  const int learners = node.get<int32_t>();
  if (learners < 1 || learners > 4096) throw CheckpointError("section 'node': " + std::to_string(learners) + " learners");
  const uint8_t mode = node.get<uint8_t>();
  const int32_t sync_every = node.get<int32_t>();
  if (mode > static_cast<uint8_t>(IntraSync::none) || sync_every < 1)
    throw CheckpointError("section 'node': averaging " + std::to_string(mode) + " every " + std::to_string(sync_every));
  s.schedule.set_averaging(static_cast<IntraSync>(mode), sync_every);  // the tuner's choice or trial
  s.autotune.tuner.restore(node);
  s.result.time_to_target_seconds = get_optional(node);
  node.finish();
  if (counters.iteration < 0 || counters.samples < 0 || counters.samples > s.schedule.target_samples())
    throw CheckpointError("section 'node': counters outside this run (iteration " +
                          std::to_string(counters.iteration) + ", " + std::to_string(counters.samples) + " samples)");
  s.schedule.restore(counters);
  s.result.steps = counters.iteration, s.result.samples = counters.samples;

  SectionReader history = in.reader("history");
  s.result.history = get_history(history);
  history.finish();

  SectionReader central = in.reader("central");
  central.floats(s.central->params(), n);
  central.finish();
  SectionReader prev = in.reader("central_prev");
  prev.floats(s.z_prev.data(), n);
  prev.finish();
  if (in.has("shared_optimizer")) {
    SectionReader optimizer = in.reader("shared_optimizer");
    shared_optimizer(s).restore(optimizer);
    optimizer.finish();
  }
  if (in.has("exchange")) s.resume.exchange = get_exchange_state(in.reader("exchange"), n);
  return learners;
}

void restore_learner(Learner& learner, int index, const Checkpoint& in) {
  SectionReader section = in.reader(learner_section(index));
  learner.restore(section);
  section.finish();
}

}  // namespace starling::actors
