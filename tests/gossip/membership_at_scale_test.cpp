// The membership protocol at 256 and 1,024 peers on the in-memory transport, in simulated
// time: one thread steps a clock that the network's heartbeats, every peer's polls and every
// receipt read, so a run is deterministic (the same deaths at the same instants, twice over)
// and costs seconds, not the minutes its simulated time would take. The heartbeats come from
// the links, as in a job, not from the membership.
//  - Three failure timeouts with everyone alive: nobody is taken for dead.
//  - Then one peer stops: its watchers time it out and probe its other watchers, and every
//    live peer learns the death within the failure timeout, one heartbeat, the probe
//    timeout and one step per hop of the overlay (log2 n hops), most of them by notice.
#define BOOST_TEST_MODULE gossip_membership_at_scale
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "gossip/control/membership.h"
#include "gossip/control/watch_overlay.h"
#include "gossip/transport/memory/memory_network.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"

using namespace starling::gossip;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

const MembershipOptions kOptions{200ms, 2000ms, 0ms, 3, 400ms};
constexpr auto kStep = 50ms;  // the simulated time between two rounds of every peer's loop

struct Peer {
  std::unique_ptr<Transport> transport;
  std::unique_ptr<Membership> membership;
  bool stopped = false;
  std::optional<Clock::duration> learned;  // how long after the death it took the victim for dead
  bool by_notice = false;
};

struct Outcome {
  std::vector<std::optional<Clock::duration>> learned;  // per peer
  int by_timeout = 0;
  int false_deaths = 0;
};

// A job of n peers on one in-memory network, the victim stopped after three failure
// timeouts; every peer's loop runs once per step until all live peers know, or 20 s.
Outcome run_job(int n, PeerId victim) {
  Clock::time_point now = Clock::time_point(std::chrono::hours(1000));
  const Clock::time_point start = now;
  TransportContext context{InMemory{[&now] { return now; }}};
  std::vector<PeerId> ring(static_cast<std::size_t>(n));
  std::iota(ring.begin(), ring.end(), 0u);
  std::vector<Peer> peers(ring.size());
  for (PeerId r : ring) {
    TransportOptions o;
    o.self = r;
    o.bind_endpoint = "peer-" + std::to_string(r);
    o.heartbeat_interval = kOptions.heartbeat_interval;
    for (PeerId p : ring)
      if (p != r) o.accept.push_back(p), o.directory[p] = "peer-" + std::to_string(p);
    peers[r].transport = std::make_unique<Transport>(context, o);
  }
  for (PeerId r : ring) {
    Peer& p = peers[r];
    p.membership = std::make_unique<Membership>(*p.transport, kOptions);
    for (PeerId q : ring)
      if (q != r) p.membership->track(q, now);
    const std::vector<PeerId> watched = watch_overlay(ring, r);
    p.membership->watch(watched, now, ring);
    p.transport->watch(watched);
    p.membership->started();
  }

  Outcome out;
  out.learned.resize(ring.size());
  const Clock::time_point kill_at = start + 3 * kOptions.failure_timeout;
  auto everyone_knows = [&] {
    for (PeerId r : ring)
      if (r != victim && !peers[r].learned) return false;
    return true;
  };
  while (now < kill_at + 20s && !(now > kill_at && everyone_knows())) {
    if (now >= kill_at && !peers[victim].stopped) peers[victim].transport->stop(), peers[victim].stopped = true;
    context.memory()->beat(now);
    for (PeerId r : ring) {
      Peer& p = peers[r];
      if (p.stopped) continue;
      p.membership->poll(now);
      while (std::optional<Message> m = p.transport->try_receive()) p.membership->observe(*m, now);
      for (const ViewChange& c : p.membership->take_changes()) {
        if (c.peer != victim || now < kill_at) {
          ++out.false_deaths;
          BOOST_TEST_MESSAGE("peer " << r << " took " << c.peer << " for " << to_string(c.state) << ": " << c.reason);
          continue;
        }
        if (c.state == PeerState::dead && !p.learned) {
          p.learned = now - kill_at;
          p.by_notice = c.reason.find("says peer") != std::string::npos;
          out.by_timeout += !p.by_notice;
        }
      }
    }
    now += kStep;
  }
  for (PeerId r : ring) out.learned[r] = peers[r].learned;
  for (Peer& p : peers) p.transport->stop();
  return out;
}

Outcome check_death_reaches_everyone(int n, PeerId victim) {
  const Outcome o = run_job(n, victim);
  BOOST_TEST(o.false_deaths == 0);
  std::vector<PeerId> ring(static_cast<std::size_t>(n));
  std::iota(ring.begin(), ring.end(), 0u);
  const std::size_t watchers = watch_overlay(ring, victim).size();
  Clock::duration latest{0};
  for (int r = 0; r < n; ++r) {
    if (r == static_cast<int>(victim)) continue;
    BOOST_TEST_REQUIRE(o.learned[r].has_value(), "peer " << r << " of " << n << " never learned of the death");
    latest = std::max(latest, *o.learned[r]);
  }
  BOOST_TEST(o.by_timeout >= 1);
  BOOST_TEST(o.by_timeout <= static_cast<int>(watchers));  // the rest by notice over the overlay
  const Clock::duration bound = kOptions.failure_timeout + kOptions.heartbeat_interval + kOptions.probe_timeout +
                                static_cast<int>(std::ceil(std::log2(n))) * kStep;
  BOOST_TEST((latest <= bound), n << " peers: the last learned " << std::chrono::duration<double>(latest).count()
                                << " s after the death, bound " << std::chrono::duration<double>(bound).count() << " s");
  BOOST_TEST_MESSAGE(n << " peers: every live peer knew " << std::chrono::duration<double>(latest).count()
                       << " s (simulated) after the death; " << o.by_timeout << " of its " << watchers
                       << " watchers by their own timeout, the others by notice");
  return o;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_death_among_256_peers_reaches_every_live_peer_the_same_way_twice) {
  const Outcome first = check_death_reaches_everyone(256, 100), second = run_job(256, 100);
  BOOST_TEST((first.learned == second.learned), "two runs of the same job learned the death at other instants");
  BOOST_TEST(first.by_timeout == second.by_timeout);
}

BOOST_AUTO_TEST_CASE(a_death_among_1024_peers_reaches_every_live_peer) { check_death_reaches_everyone(1024, 700); }
