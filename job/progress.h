#pragma once
// The progress line on stderr: rewritten in place on a terminal (about 10 times a second),
// a plain line every few seconds when piped, so logs stay readable; an info log line every
// few seconds once log_lines(true) (JSON logs, cli/json_log.h).
#include <chrono>
#include <cstdint>
#include <string>

namespace starling::job {

class ProgressLine {
 public:
  explicit ProgressLine(std::string label);
  /// done/total steps, the current epoch, the last loss and the throughput.
  void update(int64_t done, int64_t total, double epoch, double loss, double samples_per_second);
  /// Any text behind the label, throttled like update() unless `force`.
  void show(const std::string& text, bool force = false);
  /// Ends an in-place line so the next log line starts clean.
  void clear();
  /// Every progress line of the process goes to the log from now on.
  static void log_lines(bool on);

 private:
  std::string label_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_;
  bool shown_ = false;
};

/// "1h02m", "3m07s" or "12s".
std::string format_duration(double seconds);

}  // namespace starling::job
