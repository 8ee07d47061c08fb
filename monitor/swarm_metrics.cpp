#include "monitor/swarm_metrics.h"

#include "learners/tasks/text_task.h"

#include <prometheus/text_serializer.h>

#include <sstream>

namespace starling::monitor {
namespace {

// Moves a counter up to a running total read elsewhere.
void advance(prometheus::Counter& c, double total) {
  const double now = c.Value();
  if (total > now) c.Increment(total - now);
}

}  // namespace

SwarmMetrics::SwarmMetrics(const MetricsIdentity& who) : registry_(std::make_shared<prometheus::Registry>()), who_(who) {
  gauge("starling_run_info", "The run this peer trains in (always 1)",
        {{"run", who.run}, {"peer", std::to_string(who.peer_id)}, {"mode", who.mode}, {"codec", who.codec}})
      .Set(1);
}

prometheus::Family<prometheus::Gauge>& SwarmMetrics::gauges(const std::string& name, const std::string& help) {
  auto& f = gauge_families_[name];
  if (!f) f = &prometheus::BuildGauge().Name(name).Help(help).Register(*registry_);
  return *f;
}

prometheus::Family<prometheus::Counter>& SwarmMetrics::counters(const std::string& name, const std::string& help) {
  auto& f = counter_families_[name];
  if (!f) f = &prometheus::BuildCounter().Name(name).Help(help).Register(*registry_);
  return *f;
}

prometheus::Gauge& SwarmMetrics::gauge(const std::string& name, const std::string& help, const prometheus::Labels& labels) {
  return gauges(name, help).Add(labels);
}

prometheus::Counter& SwarmMetrics::counter(const std::string& name, const std::string& help, const prometheus::Labels& labels) {
  return counters(name, help).Add(labels);
}

void SwarmMetrics::update(const actors::NodeSnapshot& s) {
  gauge("starling_step", "Training steps (iterations) done").Set(static_cast<double>(s.step));
  gauge("starling_steps", "Training steps of the whole run").Set(static_cast<double>(s.total_steps));
  gauge("starling_epoch", "Epochs done").Set(s.epoch);
  gauge("starling_train_loss", "Mean training loss of the last order of steps").Set(s.loss);
  gauge("starling_samples_per_second", "Training samples per second of training time so far").Set(s.samples_per_second);
  gauge("starling_learners", "Learners (replicas) of this peer").Set(s.learners);
  gauge("starling_sma_period", "Iterations between the learners' SMA corrections").Set(s.sync_every);
  advance(counter("starling_compute_seconds_total", "Learners' forward, backward and update time (mean learner)"),
          s.compute_seconds);
  advance(counter("starling_exchange_seconds_total", "Time the node spent mixing with other peers"), s.exchange_seconds);
  advance(counter("starling_wait_seconds_total", "Time the node waited on its learners, averaging and messaging"),
          s.wait_seconds);
  if (s.peers_read) update_peers(s);
}

void SwarmMetrics::update_peers(const actors::NodeSnapshot& s) {
  int suspected = 0, dead = 0;
  for (const gossip::PeerStatus& p : s.peers) {
    const prometheus::Labels link{{"peer", std::to_string(p.id)}, {"codec", who_.codec}};
    advance(counter("starling_sent_bytes_total", "Bytes sent to a peer (headers and payloads)", link),
            static_cast<double>(p.traffic.bytes_sent));
    advance(counter("starling_received_bytes_total", "Bytes of accepted messages from a peer", link),
            static_cast<double>(p.traffic.bytes_received));
    advance(counter("starling_sent_messages_total", "Messages sent to a peer", link), static_cast<double>(p.traffic.messages_sent));
    advance(counter("starling_received_messages_total", "Messages accepted from a peer", link),
            static_cast<double>(p.traffic.messages_received));
    const prometheus::Labels peer{{"peer", std::to_string(p.id)}};
    gauge("starling_peer_up", "1 while membership holds the peer alive, else 0 (dead or finished)", peer).Set(p.alive ? 1 : 0);
    if (p.silent_seconds)
      gauge("starling_peer_silence_seconds", "Seconds since anything arrived from the peer", peer).Set(*p.silent_seconds);
    suspected += p.suspected, dead += !p.alive && !p.finished;
  }
  gauge("starling_suspected_peers", "Peers alive but silent past two heartbeats").Set(suspected);
  gauge("starling_dead_peers", "Peers declared dead (not those that finished)").Set(dead);
  for (const auto& [reason, count] : s.drops)
    advance(counter("starling_dropped_messages_total", "Messages from other peers dropped, by reason", {{"reason", reason}}),
            static_cast<double>(count));
  gauge("starling_members", "Members of the current membership view (synchronous modes)").Set(static_cast<double>(s.members.size()));
  advance(counter("starling_view_changes_total", "Membership views this peer went through"), static_cast<double>(s.view_changes));
  for (const auto& [id, n] : s.neighbours) {
    const prometheus::Labels peer{{"peer", std::to_string(id)}};
    advance(counter("starling_neighbour_rounds_total", "Rounds a robust aggregator saw the neighbour's update", peer),
            static_cast<double>(n.rounds));
    advance(counter("starling_neighbour_clipped_total", "Rounds the neighbour's update was clipped or rejected", peer),
            static_cast<double>(n.clipped));
  }
}

void SwarmMetrics::update(const EvalPoint& p) {
  gauge("starling_validation_loss", "Validation loss of the last evaluation").Set(p.test_loss);
  if (who_.bits_per_byte)
    gauge("starling_validation_bits_per_byte", "Validation bits per byte of the last evaluation").Set(bits_per_byte(p.test_loss));
  else
    gauge("starling_validation_accuracy", "Validation accuracy of the last evaluation").Set(p.test_accuracy);
  counter("starling_evaluations_total", "Evaluations made").Increment();
}

std::string SwarmMetrics::text() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

}  // namespace starling::monitor
