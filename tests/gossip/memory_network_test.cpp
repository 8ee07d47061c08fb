// The in-memory link (gossip/transport/memory/memory_network.h) behind the same Transport as
// ZeroMQ: delivery and byte counts, frames held for a peer not bound yet, the checks every
// link applies (unknown sender, NaN in a raw fp32 frame), heartbeats on the network's clock
// and the liveness they leave, an endpoint held twice, CURVE refused, a stopped peer.
#define BOOST_TEST_MODULE gossip_memory_network
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gossip/transport/error.h"
#include "gossip/transport/memory/memory_network.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"
#include "protocols/frame.h"

using namespace starling::gossip;
using namespace starling::protocols;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

FrameHeader push_header(std::size_t floats) {
  FrameHeader h;
  h.type = MessageType::gossip_push;
  h.round = 7;
  h.tensor_length = floats;
  return h;
}

ByteSpan bytes_of(const std::vector<float>& v) { return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4}; }

TransportOptions options_for(PeerId self, std::vector<PeerId> accept = {0, 1, 2}) {
  TransportOptions o;
  o.self = self;
  o.bind_endpoint = "tcp://127.0.0.1:" + std::to_string(7000 + self);  // a name here, nothing bound
  for (PeerId p : accept)
    if (p != self) o.accept.push_back(p), o.directory[p] = "tcp://127.0.0.1:" + std::to_string(7000 + p);
  return o;
}

std::uint64_t drops(const Transport& t, const std::string& reason) {
  const auto s = t.stats();
  const auto it = s.drops.find(reason);
  return it == s.drops.end() ? 0 : it->second;
}

}  // namespace

BOOST_AUTO_TEST_CASE(messages_arrive_whole_and_are_counted) {
  TransportContext context{InMemory{}};
  Transport a(context, options_for(0)), b(context, options_for(1));
  BOOST_TEST(a.endpoint() == "tcp://127.0.0.1:7000");
  const std::vector<float> model{1.0f, -2.5f, 3.25f};
  a.send(1, push_header(model.size()), bytes_of(model));
  const Message m = b.receive(1s);
  BOOST_TEST(m.from == 0u);
  BOOST_TEST(m.header.round == 7u);
  BOOST_TEST(m.header.sender == 0u);
  BOOST_REQUIRE(m.payload.size() == 12u);
  BOOST_TEST(std::memcmp(m.payload.data(), model.data(), 12) == 0);
  BOOST_TEST(a.stats().peers.at(1).bytes_sent == kHeaderSize + 12);
  BOOST_TEST(b.stats().peers.at(0).bytes_received == kHeaderSize + 12);
  BOOST_CHECK_THROW(b.receive(10ms), TimeoutError);
}

BOOST_AUTO_TEST_CASE(frames_for_a_peer_not_bound_yet_wait_for_it) {
  TransportContext context{InMemory{}};
  Transport a(context, options_for(0));
  const std::vector<float> v{1.0f, 2.0f};
  for (int i = 0; i < 3; ++i) a.send(1, push_header(v.size()), bytes_of(v));
  Transport b(context, options_for(1));
  for (int i = 0; i < 3; ++i) BOOST_TEST(b.receive(1s).from == 0u);
}

BOOST_AUTO_TEST_CASE(every_link_drops_what_zeromq_drops) {
  TransportContext context{InMemory{}};
  TransportOptions lonely = options_for(1, {1});  // accepts nobody
  lonely.directory[0] = "tcp://127.0.0.1:7000";
  Transport a(context, options_for(0)), b(context, lonely);
  const std::vector<float> v{1.0f};
  a.send(1, push_header(1), bytes_of(v));
  BOOST_TEST(drops(b, "unknown_sender") == 1u);
  b.accept_from(0);
  const std::vector<float> bad{1.0f, std::nanf(""), 3.0f};
  a.send(1, push_header(bad.size()), bytes_of(bad));
  BOOST_TEST(drops(b, "non_finite") == 1u);
  BOOST_TEST(!b.try_receive().has_value());
}

BOOST_AUTO_TEST_CASE(heartbeats_follow_the_networks_clock) {
  Clock::time_point now = Clock::time_point(std::chrono::hours(1000));
  TransportContext context{InMemory{[&] { return now; }}};
  TransportOptions oa = options_for(0), ob = options_for(1);
  oa.heartbeat_interval = ob.heartbeat_interval = 100ms;
  Transport a(context, oa), b(context, ob);
  a.watch({1});
  a.announce(3, 42);
  context.memory()->beat(now);
  const auto heard = b.liveness();
  BOOST_REQUIRE(heard.count(0) == 1u);
  BOOST_TEST((heard.at(0).last_heard == now));
  BOOST_TEST(heard.at(0).view == 3u);
  BOOST_TEST(heard.at(0).round == 42u);
  BOOST_TEST(!b.try_receive().has_value());  // consumed as liveness, as over ZeroMQ
  // Not due again before the interval; b watches nobody it is connected to, so it beats nobody.
  now += 50ms;
  context.memory()->beat(now);
  BOOST_TEST((b.liveness().at(0).last_heard == now - 50ms));
  BOOST_TEST(a.liveness().empty());
  now += 60ms;
  context.memory()->beat(now);
  BOOST_TEST((b.liveness().at(0).last_heard == now));
}

BOOST_AUTO_TEST_CASE(an_endpoint_is_held_once_and_curve_is_refused) {
  TransportContext context{InMemory{}};
  Transport a(context, options_for(0));
  BOOST_CHECK_THROW(Transport(context, options_for(0)), IoError);
  TransportOptions any = options_for(2);
  any.bind_endpoint = "tcp://127.0.0.1:*";
  Transport c(context, any), d(context, any);
  BOOST_TEST(c.endpoint() != d.endpoint());
  TransportOptions secure = options_for(3);
  secure.curve = CurveSecurity{};
  BOOST_CHECK_THROW(Transport(context, secure), InvalidArgument);
}

BOOST_AUTO_TEST_CASE(a_stopped_peer_reads_nothing_and_its_endpoint_is_free_again) {
  TransportContext context{InMemory{}};
  Transport a(context, options_for(0));
  auto b = std::make_unique<Transport>(context, options_for(1));
  b->stop();
  BOOST_CHECK_THROW(b->receive(10ms), IoError);
  BOOST_CHECK_THROW(b->send(0, push_header(0), ByteSpan{}), IoError);
  const std::vector<float> v{5.0f};
  a.send(1, push_header(1), bytes_of(v));  // held: nobody holds the endpoint now
  b.reset();
  Transport again(context, options_for(1));  // a restarted peer gets what was held for it
  BOOST_TEST(again.receive(1s).from == 0u);
}
