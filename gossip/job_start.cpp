// Telling a fresh job from a running one at start (gossip/job_start.h).
#include "gossip/job_start.h"

#include <algorithm>

#include "gossip/ring_common.h"

namespace starling::gossip {

JobState await_job(Transport& transport, const std::vector<PeerId>& peers, std::uint64_t round,
                   Transport::Clock::time_point deadline) {
  std::vector<Message> aside;
  for (;;) {
    const auto heard = transport.liveness();
    bool everyone = true;
    for (PeerId p : peers) {
      if (p == transport.self()) continue;
      const auto it = heard.find(p);
      if (it == heard.end() || !it->second.heartbeat) {
        everyone = false;
        continue;
      }
      if (it->second.view > 0 || it->second.round > round) {
        transport.put_back(std::move(aside));
        return JobState::running;
      }
    }
    const auto now = Transport::Clock::now();
    if (everyone || now >= deadline) {
      transport.put_back(std::move(aside));
      return JobState::fresh;
    }
    std::optional<Message> m = transport.try_receive(std::min(deadline, now + std::chrono::milliseconds(20)));
    if (m && aside.size() < kMaxEarlyMessages) aside.push_back(std::move(*m));
  }
}

}  // namespace starling::gossip
