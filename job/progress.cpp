#include "job/progress.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>

namespace starling::job {
namespace {
std::atomic<bool> to_log{false};
}  // namespace

void ProgressLine::log_lines(bool on) { to_log = on; }

std::string format_duration(double seconds) {
  const long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s % 3600 / 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

ProgressLine::ProgressLine(std::string label)
    : label_(std::move(label)), tty_(::isatty(STDERR_FILENO) == 1 && !to_log), start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressLine::update(int64_t done, int64_t total, double epoch, double loss, double samples_per_second) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total - done) : 0.0;
  char text[256];
  std::snprintf(text, sizeof text, " epoch %.2f  step %lld/%lld  loss %.4f  %.0f samples/s  ETA %s", epoch,
                static_cast<long long>(done), static_cast<long long>(total), loss, samples_per_second,
                format_duration(eta).c_str());
  show(text, done == total);
}

void ProgressLine::show(const std::string& text, bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && std::chrono::duration<double>(now - last_).count() < (tty_ ? 0.1 : 10.0)) return;
  last_ = now;
  if (to_log) {
    spdlog::info("{}{}", label_, text);
    return;
  }
  std::fprintf(stderr, "%s%s%s%s", tty_ ? "\r" : "", label_.c_str(), text.c_str(), tty_ ? "\033[K" : "\n");
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::clear() {
  if (tty_ && shown_) std::fprintf(stderr, "\r\033[K");
  shown_ = false;
}

}  // namespace starling::job
