// Failure detection at scale, on real sockets in one process:
//  - a death among 128 peers: every peer watches only its 13 overlay peers (1, 2, ..., 64
//    places either way; gossip/control/watch_overlay.h), so the victim's watchers detect its silence, ask its other
//    watchers (indirect probes), and every other live peer learns it from the death notices
//    passed on over the overlay — within the failure timeout, the probe timeout and a few
//    hops, each peer sending one notice message to each peer it watches;
//  - a peer whose heartbeats do not reach one watcher stays alive while another vouches for it.
#define BOOST_TEST_MODULE gossip_death_notice
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gossip/control/membership.h"
#include "gossip/control/watch_overlay.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"

using namespace starling::gossip;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kPeers = 128;
constexpr PeerId kVictim = 40;
const MembershipOptions kOptions{200ms, 2000ms, 0ms, 3, 400ms};

// One peer: a transport of its own (context, I/O thread) and the membership that watches.
struct Peer {
  std::unique_ptr<TransportContext> context = std::make_unique<TransportContext>(1);
  std::unique_ptr<Transport> transport;
  std::unique_ptr<Membership> membership;
  std::optional<Clock::time_point> learned;  // when it took the victim for dead
  bool by_notice = false;
};

// Heartbeats and timeouts due, then everything queued; notes when the victim went dead.
void pump(Peer& p) {
  const auto now = Clock::now();
  p.membership->poll(now);
  while (std::optional<Message> m = p.transport->try_receive()) p.membership->observe(*m, Clock::now());
  for (const ViewChange& c : p.membership->take_changes()) {
    BOOST_TEST_REQUIRE(c.peer == kVictim, "peer " << p.transport->self() << " took " << c.peer << " for " << to_string(c.state) << ": " << c.reason);
    if (c.state == PeerState::dead && !p.learned) {
      p.learned = Clock::now();
      p.by_notice = c.reason.find("says peer") != std::string::npos;
    }
  }
}

// A job of `ring.size()` peers on ipc:// endpoints in `dir`, each tracking every other and
// watching those `watch(id)` names (indirect probes over the ring).
std::vector<Peer> make_job(const std::vector<PeerId>& ring, const std::filesystem::path& dir, const MembershipOptions& options,
                           const std::function<std::vector<PeerId>(PeerId)>& watch) {
  std::map<PeerId, std::string> directory;
  for (PeerId p : ring) directory[p] = "ipc://" + (dir / std::to_string(p)).string();
  std::vector<Peer> peers(ring.size());
  for (PeerId r : ring) {
    TransportOptions o;
    o.self = r;
    o.bind_endpoint = directory[r];
    o.linger_ms = 0;
    o.heartbeat_interval = options.heartbeat_interval;
    o.directory = directory;
    o.directory.erase(r);
    for (PeerId p : ring)
      if (p != r) o.accept.push_back(p);
    peers[r].transport = std::make_unique<Transport>(*peers[r].context, o);
  }
  const auto start = Clock::now();
  for (PeerId r : ring) {
    peers[r].membership = std::make_unique<Membership>(*peers[r].transport, options);
    for (PeerId p : ring)
      if (p != r) peers[r].membership->track(p, start);
    peers[r].membership->watch(watch(r), start, ring);
  }
  return peers;
}

void raise_descriptor_limit() {
  rlimit limit{};
  BOOST_TEST_REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
  BOOST_TEST_REQUIRE(limit.rlim_cur >= 8192u, "128 peers in one process need 8192 open descriptors (ulimit -Hn)");
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_death_among_128_peers_reaches_every_live_peer_over_the_overlay) {
  raise_descriptor_limit();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("starling-death-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<PeerId> ring(kPeers);
  std::iota(ring.begin(), ring.end(), 0u);
  const auto start = Clock::now();
  std::vector<Peer> peers = make_job(ring, dir, kOptions, [&](PeerId r) { return watch_overlay(ring, r); });
  // Three failure timeouts with everyone alive: nobody is taken for dead.
  while (Clock::now() < start + 3 * kOptions.failure_timeout) {
    for (Peer& p : peers) pump(p);
    std::this_thread::sleep_for(10ms);
  }
  for (Peer& p : peers) BOOST_TEST_REQUIRE(!p.learned.has_value());

  peers[kVictim].transport->stop();
  const auto killed = Clock::now();
  auto everyone_knows = [&] {
    for (int r = 0; r < kPeers; ++r)
      if (r != static_cast<int>(kVictim) && !peers[r].learned) return false;
    return true;
  };
  while (!everyone_knows() && Clock::now() < killed + 20s) {
    for (int r = 0; r < kPeers; ++r)
      if (r != static_cast<int>(kVictim)) pump(peers[r]);
    std::this_thread::sleep_for(5ms);
  }
  const std::vector<PeerId> watchers = watch_overlay(ring, kVictim);
  double latest = 0.0;
  int by_timeout = 0;
  for (int r = 0; r < kPeers; ++r) {
    if (r == static_cast<int>(kVictim)) continue;
    BOOST_TEST_REQUIRE(peers[r].learned.has_value(), "peer " << r << " never learned of the death");
    latest = std::max(latest, std::chrono::duration<double>(*peers[r].learned - killed).count());
    const bool watcher = std::count(watchers.begin(), watchers.end(), static_cast<PeerId>(r)) != 0;
    if (!watcher) BOOST_TEST(peers[r].by_notice, "peer " << r << " does not watch the victim, yet timed it out");
    by_timeout += !peers[r].by_notice;
  }
  BOOST_TEST(by_timeout >= 1);
  BOOST_TEST(by_timeout <= static_cast<int>(watchers.size()));
  // The failure timeout, one heartbeat it may have started late, the probe timeout and the
  // hops (log2 n = 7 of them, each a pump of a few ms; a generous 0.1 s a hop for a loaded
  // CI machine).
  const double bound = std::chrono::duration<double>(kOptions.failure_timeout + kOptions.heartbeat_interval +
                                                     kOptions.probe_timeout).count() +
                       std::log2(kPeers) * 0.1;
  BOOST_TEST(latest <= bound, "the last peer learned of the death " << latest << " s after it, bound " << bound << " s");
  BOOST_TEST_MESSAGE("every live peer knew " << latest << " s after the death; " << by_timeout << " by their own timeout");
  for (Peer& p : peers) p.transport->stop();
  std::filesystem::remove_all(dir);
}

// Three peers, each watching the others; peer 2's heartbeats reach peer 1 but not peer 0
// (it watches only peer 1). Peer 0 suspects it at every timeout, asks peer 1, which heard
// it, and keeps it alive; once peer 2 stops, nobody vouches and it is dead a probe timeout
// after its failure timeout.
BOOST_AUTO_TEST_CASE(a_peer_another_watcher_hears_is_vouched_for) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("starling-vouch-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<PeerId> ring{0, 1, 2};
  const MembershipOptions options{100ms, 600ms, 0ms, 3, 300ms};
  const auto start = Clock::now();
  // Peer 2 watches only peer 1: its heartbeats never reach peer 0.
  const std::map<PeerId, std::vector<PeerId>> watches{{0, {1, 2}}, {1, {0, 2}}, {2, {1}}};
  std::vector<Peer> peers = make_job(ring, dir, options, [&](PeerId r) { return watches.at(r); });
  auto step_all = [&](std::initializer_list<PeerId> who) {
    for (PeerId r : who) {
      Peer& p = peers[r];
      p.membership->poll(Clock::now());
      while (std::optional<Message> m = p.transport->try_receive()) p.membership->observe(*m, Clock::now());
    }
    std::this_thread::sleep_for(5ms);
  };
  while (Clock::now() < start + 5 * options.failure_timeout) step_all({0, 1, 2});
  for (const ViewChange& c : peers[0].membership->take_changes())
    BOOST_TEST(false, "peer 0 took " << c.peer << " for " << to_string(c.state) << ": " << c.reason);
  BOOST_TEST(peers[0].membership->alive(2));

  peers[2].transport->stop();
  const auto stopped = Clock::now();
  std::optional<double> dead_after;
  while (!dead_after && Clock::now() < stopped + 10s) {
    step_all({0, 1});
    if (!peers[0].membership->alive(2)) dead_after = std::chrono::duration<double>(Clock::now() - stopped).count();
  }
  BOOST_TEST_REQUIRE(dead_after.has_value());
  // Peer 1 vouches while it heard peer 2 within its failure timeout, then peer 0's next
  // suspicion goes unanswered for the probe timeout.
  BOOST_TEST(*dead_after >= std::chrono::duration<double>(options.failure_timeout).count() * 0.9);
  BOOST_TEST(*dead_after <= std::chrono::duration<double>(3 * options.failure_timeout + 2 * options.probe_timeout).count() + 1.0);
  for (PeerId r : {0u, 1u}) peers[r].transport->stop();
  std::filesystem::remove_all(dir);
}
