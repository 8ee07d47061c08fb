// Learned round deadlines (gossip/control/round_deadline.h).
#include "gossip/control/round_deadline.h"

#include <algorithm>
#include <cmath>

namespace starling::gossip {

std::chrono::milliseconds RoundDeadline::current() const {
  using std::chrono::milliseconds;
  double ms = static_cast<double>(options_.initial.count());
  if (!recent_.empty())
    ms = std::max(static_cast<double>(options_.floor.count()),
                  options_.factor * 1000.0 * *std::max_element(recent_.begin(), recent_.end()));
  ms = std::ldexp(ms, std::min(cut_in_a_row_, 20));  // doubles per cut, bounded against overflow
  return milliseconds(static_cast<milliseconds::rep>(std::min(ms, 1e12)));
}

void RoundDeadline::completed(std::chrono::duration<double> took) {
  cut_in_a_row_ = 0;
  recent_.push_back(took.count());
  if (recent_.size() > options_.window) recent_.pop_front();
}

}  // namespace starling::gossip
