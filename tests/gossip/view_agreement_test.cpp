// One view change (gossip/control/view_agreement.h) seen from a member that is not the
// leader, on real ZeroMQ over 127.0.0.1: the test plays the leader, peer 0, by hand. A leader
// that took peer 1 for dead decides without it and tells it nothing; peer 1 keeps repeating
// its status, so the leader, in its new view, hears it from outside and takes it in again.
#define BOOST_TEST_MODULE gossip_view_agreement
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <vector>

#include "gossip/control/control_plane.h"
#include "gossip/control/view_agreement.h"
#include "gossip/transport/error.h"
#include "protocols/view_messages.h"
#include "tests/gossip/peer_group.h"

using namespace starling::gossip;
using namespace starling::gossip::testing;
using namespace std::chrono_literals;
namespace protocols = starling::protocols;

namespace {

using Clock = Transport::Clock;

// The next view message at `leader` before `deadline`, skipping heartbeats; none at the deadline.
std::optional<protocols::ViewMessage> next_view_message(Transport& leader, Clock::time_point deadline) {
  for (;;) {
    std::optional<Message> m = leader.try_receive(deadline);
    if (!m) return std::nullopt;
    if (m->header.type != protocols::MessageType::view) continue;
    protocols::Result<protocols::ViewMessage> view = protocols::decode_view(m->bytes());
    BOOST_REQUIRE(view);
    return *view;
  }
}

void send_decide(Transport& leader, PeerId to, const Decision& d) {
  protocols::ViewMessage decide;
  decide.kind = protocols::ViewKind::decide;
  decide.view = d.view.number;
  decide.round = d.start_round;
  decide.iteration = d.iteration;
  decide.source = d.source;
  decide.peers = d.view.members;
  std::vector<std::uint8_t> payload;
  BOOST_REQUIRE(protocols::encode_view(decide, payload) == protocols::Error::ok);
  protocols::FrameHeader h;
  h.type = protocols::MessageType::view;
  leader.send(to, h, payload);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_member_left_out_repeats_its_status_until_a_decision_takes_it_in) {
  PeerGroup group(2);
  group.connect_all();
  ControlOptions o;
  o.membership.heartbeat_interval = 1000ms;
  o.membership.failure_timeout = 20s;  // peer 0 stays alive to peer 1 throughout
  ControlPlane control(group.at(1), group.ids(), o);
  ViewAgreement agreement(group.at(1), control);
  const View view0{0, {0, 1}};
  auto outcome = std::async(std::launch::async, [&] { return agreement.run(view0, Standing{9, 9}, Clock::now() + 10s); });

  // Peer 0 leads (the lowest live member), has taken peer 1 for dead, and decides without
  // it: it reads peer 1's status and answers nothing.
  const auto first = next_view_message(group.at(0), Clock::now() + 5s);
  BOOST_REQUIRE(first);
  BOOST_TEST((first->kind == protocols::ViewKind::status));
  BOOST_TEST(first->view == 0u);
  BOOST_TEST(first->round == 9u);
  const auto told = Clock::now();
  const auto again = next_view_message(group.at(0), told + 3s);
  const double waited = std::chrono::duration<double>(Clock::now() - told).count();
  // In view 1 without peer 1, a status from outside it asks peer 1 in; view 2 takes it in.
  const Decision in{View{2, {0, 1}}, 12, 0, 12};
  send_decide(group.at(0), 1, in);
  BOOST_REQUIRE(outcome.wait_for(5s) == std::future_status::ready);
  const Decision d = outcome.get();

  BOOST_REQUIRE_MESSAGE(again, "peer 1 told the leader its status once and then only waited");
  BOOST_TEST((again->kind == protocols::ViewKind::status));
  BOOST_TEST(again->view == 0u);
  BOOST_TEST(waited >= 0.3);  // a repeat in its own time (seconds), not a burst
  BOOST_TEST(d.view.number == 2u);
  BOOST_TEST(d.view.members == (std::vector<PeerId>{0, 1}));
  BOOST_TEST(d.start_round == 12u);
}
