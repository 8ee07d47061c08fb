#pragma once
// How long a synchronous round may last before it is cut short (and retried in a new
// view): learned from the rounds before it, so that a slow link or CPU needs no timeout in
// the config. A round may last
//
//     max(floor, factor × the longest of the last `window` completed rounds)
//
// and before any round completed, `initial`. Each round cut short in a row doubles that, and
// a completed round ends the doubling, so a round that is merely slower than those before
// it gets through on a retry instead of failing for good. The floor is the failure timeout:
// a member silent that long is taken for dead anyway, so no shorter wait can be a
// straggler's fault alone.
#include <chrono>
#include <cstddef>
#include <deque>

namespace starling::gossip {

struct RoundDeadlineOptions {
  std::chrono::milliseconds floor{5000};
  std::chrono::milliseconds initial{60000};
  double factor = 4.0;
  std::size_t window = 16;
};

class RoundDeadline {
 public:
  explicit RoundDeadline(RoundDeadlineOptions options = {}) : options_(options) {}

  /// How long the next round may last.
  std::chrono::milliseconds current() const;
  /// A round completed after `took`.
  void completed(std::chrono::duration<double> took);
  /// The round passed current() and was cut short.
  void cut_short() { ++cut_in_a_row_; }

 private:
  RoundDeadlineOptions options_;
  std::deque<double> recent_;  // seconds, the newest last
  int cut_in_a_row_ = 0;
};

}  // namespace starling::gossip
