// The in-memory link (gossip/transport/memory/memory_network.h) behind the same Transport
// as ZeroMQ: delivery and byte counts, frames held for a peer not bound yet, each of the
// admission checks every link applies (admission.h: wrong CRC, payload over the size limit,
// beyond the rate cap, unknown sender, NaN or infinity in a raw fp32 frame), heartbeats on
// the network's clock and the liveness they leave, an endpoint held twice, CURVE refused,
// a stopped peer.
#define BOOST_TEST_MODULE gossip_memory_network
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "gossip/transport/error.h"
#include "gossip/transport/memory/memory_network.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"
#include "protocols/crc32c.h"
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

namespace {

// A frame the receiver must drop, and what it takes to send it. The receiver adds every
// payload that reaches it to its model, so a frame let through changes the model.
struct Hostile {
  const char* reason;  // the drop counter it must raise
  std::uint64_t drops;
  std::size_t passed;  // frames of the sender's that are fine and arrive first (the rate cap's burst)
  std::function<void(TransportOptions&)> receiver;
  std::function<void(Transport&, Clock::time_point&)> send;  // the frames, or the sender's time
  std::function<void(Transport& receiver, Clock::time_point& now)> mend;  // so a good frame passes
};

std::ostream& operator<<(std::ostream& out, const Hostile& h) { return out << h.reason; }

const std::vector<float> kUpdate{0.5f, -1.0f, 2.0f, 0.25f};  // what every good frame carries
const std::vector<float> kPoison{1e30f, -1e30f, 1e30f, -1e30f};

void send_update(Transport& t, const std::vector<float>& v) { t.send(1, push_header(v.size()), bytes_of(v)); }

const Hostile kHostile[] = {
    {"crc_mismatch", 1, 0, [](TransportOptions&) {},
     [](Transport& t, Clock::time_point&) {
       FrameHeader h = push_header(kPoison.size());
       h.payload_crc = crc32c(kPoison.data(), kPoison.size() * sizeof(float)) ^ 1u;
       t.send_checksummed(1, h, Payload(bytes_of(kPoison)));
     },
     [](Transport&, Clock::time_point&) {}},
    {"oversized", 1, 0, [](TransportOptions& o) { o.limits.max_payload = kUpdate.size() * sizeof(float); },
     [](Transport& t, Clock::time_point&) { send_update(t, std::vector<float>(kUpdate.size() + 1, 1e30f)); },
     [](Transport&, Clock::time_point&) {}},
    {"rate_limited", 3, 4, [](TransportOptions& o) { o.max_messages_per_second = 4; },
     [](Transport& t, Clock::time_point&) {
       for (int i = 0; i < 4; ++i) send_update(t, kUpdate);  // the first second's burst
       for (int i = 0; i < 3; ++i) send_update(t, kPoison);  // at the same instant: over the cap
     },
     [](Transport&, Clock::time_point& now) { now += 1s; }},
    {"unknown_sender", 1, 0, [](TransportOptions& o) { o.accept.clear(); },
     [](Transport& t, Clock::time_point&) { send_update(t, kPoison); },
     [](Transport& receiver, Clock::time_point&) { receiver.accept_from(0); }},
    {"non_finite", 2, 0, [](TransportOptions&) {},
     [](Transport& t, Clock::time_point&) {
       send_update(t, {1.0f, std::nanf(""), 3.0f, 4.0f});
       send_update(t, {1.0f, 2.0f, std::numeric_limits<float>::infinity(), 4.0f});
     },
     [](Transport&, Clock::time_point&) {}},
};

// Adds every payload waiting for `t` to `model`; the number of payloads.
std::size_t apply_arrived(Transport& t, std::vector<float>& model) {
  std::size_t n = 0;
  while (std::optional<Message> m = t.try_receive()) {
    BOOST_REQUIRE(m->payload.size() == model.size() * sizeof(float));
    std::vector<float> v(model.size());
    std::memcpy(v.data(), m->payload.data(), m->payload.size());
    for (std::size_t i = 0; i < model.size(); ++i) model[i] += v[i];
    ++n;
  }
  return n;
}

std::vector<float> plus_updates(std::vector<float> model, std::size_t times) {
  for (std::size_t t = 0; t < times; ++t)
    for (std::size_t i = 0; i < model.size(); ++i) model[i] += kUpdate[i];
  return model;
}

}  // namespace

// Each admission check on the in-memory link: the frame is counted under its reason, nothing
// of it reaches the owner's model, and once mended the same route carries a good frame.
BOOST_DATA_TEST_CASE(every_admission_check_drops_on_the_in_memory_link, boost::unit_test::data::make(kHostile), h) {
  Clock::time_point now = Clock::time_point(std::chrono::hours(1000));
  TransportContext context{InMemory{[&] { return now; }}};
  TransportOptions ob = options_for(1);
  h.receiver(ob);
  ob.directory[0] = "tcp://127.0.0.1:7000";
  Transport a(context, options_for(0)), b(context, ob);
  const std::vector<float> start{1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> model = start;

  h.send(a, now);
  BOOST_TEST(drops(b, h.reason) == h.drops);
  BOOST_TEST(b.stats().dropped() == h.drops);
  BOOST_TEST(apply_arrived(b, model) == h.passed);
  BOOST_TEST(model == plus_updates(start, h.passed), boost::test_tools::per_element());

  h.mend(b, now);
  send_update(a, kUpdate);
  BOOST_TEST(apply_arrived(b, model) == 1u);
  BOOST_TEST(model == plus_updates(start, h.passed + 1), boost::test_tools::per_element());
  BOOST_TEST(b.stats().dropped() == h.drops);
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
