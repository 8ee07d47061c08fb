#include "monitor/peer_monitor.h"

#include "learners/tasks/text_task.h"
#include "monitor/live_page.h"

namespace starling::monitor {

PeerMonitor::PeerMonitor(const MonitorAddress& at, const MetricsIdentity& metrics, LiveIdentity live)
    : bits_per_byte_(metrics.bits_per_byte),
      metrics_(metrics),
      live_(std::move(live)),
      server_(at.bind, at.port,
              Routes{{"/metrics", [this] { return Response{"text/plain; version=0.0.4; charset=utf-8", metrics_.text()}; }},
                     {"/state.json", [this] { return Response{"application/json", live_.json()}; }},
                     {"/seed.json", [] { return Response{"application/json", seed_json("")}; }},
                     {"/", [] { return Response{"text/html; charset=utf-8", live_page_html()}; }}}) {}

void PeerMonitor::on_snapshot(const actors::NodeSnapshot& snapshot) {
  metrics_.update(snapshot);
  live_.update(snapshot);
}

void PeerMonitor::on_eval(const EvalPoint& point) {
  metrics_.update(point);
  live_.update(point, bits_per_byte_ ? bits_per_byte(point.test_loss) : point.test_accuracy);
}

void PeerMonitor::on_event(const std::string& line) { live_.event(line); }

std::string monitor_url(const std::string& endpoint, int port) {
  const auto scheme = endpoint.find("://");
  const std::string rest = scheme == std::string::npos ? endpoint : endpoint.substr(scheme + 3);
  const std::string host = rest.substr(0, rest.rfind(':'));
  if (host.empty() || host == "*" || rest.find(':') == std::string::npos) return "";
  return "http://" + host + ":" + std::to_string(port);
}

}  // namespace starling::monitor
