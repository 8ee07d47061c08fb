#include "cli/simulate_report.h"

#include <fmt/format.h>

#include <cmath>

namespace starling::cli {

using job::JsonObject;

namespace {

std::string mode_text(const simulator::Workload& w) {
  std::string s = gossip::exchange_mode_name(w.mode);
  if (gossip::uses_topology(w.mode)) s += " on " + w.topology;
  if (w.codec != "none") s += " with " + w.codec;
  if (w.period > 1) s += fmt::format(" every {} iterations", w.period);
  if (w.mode == gossip::ExchangeMode::async_gossip) s += fmt::format(", staleness <= {}", w.max_staleness);
  return s;
}

std::string network_text(const SimulationReport& r) {
  const auto& n = r.cluster.network;
  if (n.loopback)
    return fmt::format("loopback (measured: alpha {:.0f} us, beta {:.2f} GB/s, {:.2f} ns CPU per byte)",
                       r.measured.loopback.alpha_seconds * 1e6, r.measured.loopback.beta_bytes_per_second / 1e9,
                       r.measured.loopback.cpu_seconds_per_byte * 1e9);
  return fmt::format("{} (alpha {:.0f} us, beta {:.3g} GB/s per link)", n.text, n.link.alpha_seconds * 1e6,
                     n.link.beta_bytes_per_second / 1e9);
}

std::string hosts_text(const SimulationReport& r) {
  const int cores = simulator::cores_per_host(r.work, r.cluster, r.this_machine_cores);
  if (r.cluster.hosts > 0) return fmt::format("{} host(s) of {} cores", r.cluster.hosts, cores);
  return r.cluster.network.loopback ? fmt::format("every peer on this host ({} cores)", cores)
                                    : fmt::format("one peer per host of {} cores", cores);
}

std::string measured_text(const SimulationReport& r) {
  const auto& m = r.measured;
  std::string s = fmt::format("measured: step {:.0f} us at batch {} ({:.0f} samples/s per learner), hand-off {:.0f} us, add {:.3f} ns/element",
                              m.step_seconds * 1e6, r.work.batch, r.work.batch / m.step_seconds, m.handoff_seconds * 1e6,
                              m.add_seconds_per_element * 1e9);
  if (m.shared_step_seconds > 0)
    s += fmt::format("; {:.0f} us with {} replicas stepping at once", m.shared_step_seconds * 1e6, m.shared_concurrency);
  if (r.work.codec != "none")
    s += fmt::format("; {} encode {:.2f} / decode {:.2f} ns/element, {:.0f} bytes on the wire ({:.1f}x smaller)", m.codec.codec,
                     m.codec.encode_seconds_per_element * 1e9, m.codec.decode_seconds_per_element * 1e9, m.codec.wire_bytes,
                     4 * r.work.parameters / std::max(1.0, m.codec.wire_bytes));
  for (const auto& [q, seconds] : m.crowded_latency) {
    s += fmt::format("; ring step among {} peers here {:.0f} us", q, seconds * 1e6);
    if (const auto it = m.crowded_seconds_per_byte.find(q); it != m.crowded_seconds_per_byte.end())
      s += fmt::format(" + {:.2f} ns/byte", it->second * 1e9);
  }
  for (const auto& [q, seconds] : m.host_round_seconds)
    s += fmt::format("; {} peers training together here: {:.3f} ms a round", q, seconds * 1e3);
  return s + "\n";
}

}  // namespace

std::string report_text(const SimulationReport& r) {
  std::string s = fmt::format("{}: {} ({} parameters), batch {} x {} learner(s), {}\n", r.run, r.work.model,
                              static_cast<long long>(r.work.parameters), r.work.batch, r.work.learners, mode_text(r.work));
  s += fmt::format("network {}; {}; stragglers {}\n", network_text(r), hosts_text(r), r.straggler_text);
  s += measured_text(r);
  s += fmt::format("{:>5} {:>11} {:>9} {:>8} {:>6} {:>13} {:>9} {:>9} {:>9} {:>9} {:>9}  {}\n", "peers", "samples/s", "epoch s",
                   "speedup", "eff.", "MB/peer/round", "round ms", "compute", "exchange", "wait", "ctl msg/s", "bound");
  for (const auto& p : r.rows)
    s += fmt::format("{:>5} {:>11.0f} {:>9.2f} {:>8.2f} {:>5.0f}% {:>13.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.1f}  {}\n",
                     p.peers, p.samples_per_second, p.epoch_seconds, p.speedup, p.efficiency * 100,
                     p.bytes_per_peer_per_round / 1e6, p.round_seconds * 1e3, p.compute_seconds * 1e3,
                     p.exchange_seconds * 1e3, p.wait_seconds * 1e3, p.control_messages_per_second, p.bound);
  return s;
}

JsonObject report_json(const SimulationReport& r) {
  const auto& m = r.measured;
  JsonObject measured;
  measured.add("step_seconds", m.step_seconds)
      .add("shared_step_seconds", m.shared_step_seconds)
      .add("shared_concurrency", m.shared_concurrency)
      .add("handoff_seconds", m.handoff_seconds)
      .add("add_seconds_per_element", m.add_seconds_per_element)
      .add("loopback_alpha_seconds", m.loopback.alpha_seconds)
      .add("loopback_beta_bytes_per_second", m.loopback.beta_bytes_per_second)
      .add("loopback_cpu_seconds_per_byte", m.loopback.cpu_seconds_per_byte);
  for (const auto& [q, seconds] : m.host_round_seconds) measured.add("host_round_seconds_" + std::to_string(q), seconds);
  if (r.work.codec != "none")
    measured.add("codec_encode_seconds_per_element", m.codec.encode_seconds_per_element)
        .add("codec_decode_seconds_per_element", m.codec.decode_seconds_per_element)
        .add("codec_wire_bytes", m.codec.wire_bytes);
  std::vector<JsonObject> rows;
  for (const auto& p : r.rows) {
    JsonObject row;
    row.add("peers", p.peers)
        .add("samples_per_second", p.samples_per_second)
        .add("epoch_seconds", p.epoch_seconds)
        .add("speedup", p.speedup)
        .add("efficiency", p.efficiency)
        .add("bytes_per_peer_per_round", p.bytes_per_peer_per_round)
        .add("round_seconds", p.round_seconds)
        .add("compute_seconds", p.compute_seconds)
        .add("exchange_seconds", p.exchange_seconds)
        .add("wait_seconds", p.wait_seconds)
        .add("comm_bound_speedup", p.comm_bound_speedup > 0 ? std::optional<double>(p.comm_bound_speedup) : std::nullopt)
        .add("control_messages_per_second", p.control_messages_per_second)
        .add("control_seconds", p.control_seconds)
        .add("bound", p.bound);
    rows.push_back(row);
  }
  JsonObject j;
  j.add("run", r.run)
      .add("config", r.config)
      .add("model", r.work.model)
      .add("parameters", r.work.parameters)
      .add("batch", r.work.batch)
      .add("learners_per_peer", r.work.learners)
      .add("mode", gossip::exchange_mode_name(r.work.mode))
      .add("topology", r.work.topology)
      .add("codec", r.work.codec)
      .add("period", r.work.period)
      .add("network", r.cluster.network.text)
      .add("loopback", r.cluster.network.loopback)
      .add("alpha_seconds", r.cluster.network.loopback ? m.loopback.alpha_seconds : r.cluster.network.link.alpha_seconds)
      .add("beta_bytes_per_second",
           r.cluster.network.loopback ? m.loopback.beta_bytes_per_second : r.cluster.network.link.beta_bytes_per_second)
      .add("hosts", r.cluster.hosts)
      .add("cores_per_host", simulator::cores_per_host(r.work, r.cluster, r.this_machine_cores))
      .add("stragglers", r.straggler_text)
      .add("measured", measured)
      .add("predictions", rows);
  return j;
}

}  // namespace starling::cli
