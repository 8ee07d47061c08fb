#pragma once
// A peer's Prometheus metrics (prometheus-cpp): the node's snapshots and evaluations turned
// into gauges and counters named as Prometheus asks (starling_..._total, _seconds, _bytes),
// and their text exposition for /metrics. One thread updates (the metrics actor) while any
// number read text().
#include "actors/node.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

namespace starling::monitor {

/// Who the metrics describe: labels of starling_run_info, and the codec every byte counter
/// is labelled with.
struct MetricsIdentity {
  std::string run;
  uint32_t peer_id = 0;
  std::string mode;   // exchange mode
  std::string codec;  // exchange codec
  bool bits_per_byte = false;  // the validation metric: bits per byte (text), else accuracy
};

class SwarmMetrics {
 public:
  explicit SwarmMetrics(const MetricsIdentity& who);

  /// Counters move to the snapshot's totals (never back: a stale snapshot leaves them).
  void update(const actors::NodeSnapshot& snapshot);
  void update(const EvalPoint& point);
  /// The Prometheus text exposition format (version 0.0.4).
  std::string text() const;

 private:
  void update_peers(const actors::NodeSnapshot& snapshot);
  prometheus::Gauge& gauge(const std::string& name, const std::string& help, const prometheus::Labels& labels = {});
  prometheus::Counter& counter(const std::string& name, const std::string& help, const prometheus::Labels& labels = {});
  // Families are made once per name; a name's help is the one given first.
  prometheus::Family<prometheus::Gauge>& gauges(const std::string& name, const std::string& help);
  prometheus::Family<prometheus::Counter>& counters(const std::string& name, const std::string& help);

  std::shared_ptr<prometheus::Registry> registry_;
  MetricsIdentity who_;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauge_families_;
  std::map<std::string, prometheus::Family<prometheus::Counter>*> counter_families_;
};

}  // namespace starling::monitor
