#include "cli/monitor_command.h"

#include "monitor/http_server.h"
#include "monitor/live_page.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <ctime>

namespace starling::cli {

namespace {

sigset_t stop_signals() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  return stop;
}

// Waits for SIGINT or SIGTERM (blocked by the caller), or `seconds` when positive.
void wait_for_stop(double seconds) {
  const sigset_t stop = stop_signals();
  if (seconds <= 0) {
    int signal = 0;
    sigwait(&stop, &signal);
    return;
  }
  timespec limit{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
  sigtimedwait(&stop, nullptr, &limit);
}

}  // namespace

int run_monitor(const MonitorOptions& options) {
  const std::string seed = options.peer.rfind("http://", 0) == 0 ? options.peer : "http://" + options.peer;
  try {
    // Block the signals before civetweb's threads exist, so only sigwait takes them.
    const sigset_t stop = stop_signals();
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    monitor::HttpServer server(options.bind, options.port,
                               {{"/", [] { return monitor::Response{"text/html; charset=utf-8", monitor::live_page_html()}; }},
                                {"/seed.json", [seed] { return monitor::Response{"application/json", monitor::seed_json(seed)}; }}});
    spdlog::info("the live page of the swarm of {}: http://{}:{}/", seed, options.bind, options.port);
    wait_for_stop(options.seconds);
  } catch (const monitor::PortUnavailable& e) {
    spdlog::error("--port {}: {}", options.port, e.what());
    return 2;
  }
  return 0;
}

}  // namespace starling::cli
