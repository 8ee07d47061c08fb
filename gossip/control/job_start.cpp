// Telling a fresh job from a running one at start (gossip/control/job_start.h).
#include "gossip/control/job_start.h"

#include <algorithm>

#include "gossip/transport/ring_common.h"

namespace starling::gossip {

namespace {

enum class Heard { waiting, everyone, running };

// What the heartbeats heard so far say; `count` gets the peers heard, this one included.
Heard judge(const Transport& transport, const JobStart& start, std::size_t& count) {
  const auto heard = transport.liveness();
  count = 0;
  bool everyone = true;
  for (PeerId p : start.peers) {
    if (p == transport.self()) {
      ++count;
      continue;
    }
    const auto it = heard.find(p);
    if (it == heard.end() || !it->second.heartbeat) {
      everyone = false;
      continue;
    }
    ++count;
    const PeerLiveness& h = it->second;
    if (h.view > 0 || h.round > start.round + start.reach) return Heard::running;
  }
  return everyone ? Heard::everyone : Heard::waiting;
}

}  // namespace

JobState await_job(Transport& transport, const JobStart& start) {
  std::vector<Message> aside;
  auto done = [&](JobState state) {
    transport.put_back(std::move(aside));
    return state;
  };
  std::size_t known = 0;
  auto deadline = Transport::Clock::now() + start.patience;
  std::optional<Transport::Clock::time_point> change_seen;
  for (;;) {
    std::size_t count = 0;
    const Heard heard = judge(transport, start, count);
    if (heard == Heard::running) return done(JobState::running);
    const auto now = Transport::Clock::now();
    if (count > known) known = count, deadline = std::max(deadline, now + start.patience);
    const bool quorum = now >= deadline && count >= start.quorum;
    if (heard == Heard::everyone || quorum || now >= deadline + start.quorum_patience) return done(JobState::fresh);
    if (const auto view = start.view_change_begun ? start.view_change_begun() : std::nullopt) {
      if (*view > 0) return done(JobState::running);
      if (!change_seen) change_seen = now;
      if (now >= *change_seen + start.confirm) return done(JobState::fresh);
    }
    std::optional<Message> m = transport.try_receive(now + std::chrono::milliseconds(20));
    if (m && aside.size() < kMaxEarlyMessages) aside.push_back(std::move(*m));
  }
}

}  // namespace starling::gossip
