// Peers behind NAT over real ZeroMQ on 127.0.0.1 (gossip/transport/link.h's kBehindNat): a
// reachable peer reaches one behind NAT over the connection that one dialed, holding frames
// until it has; two behind NAT reach each other through a relay, in order, and through the
// next relay once the first is gone; a relay passes on only between peers it knows, and a
// relayed frame counts as its origin's only if its header names the origin; a reachable
// newcomer's hello reaches a peer behind NAT that has not dialed it through a relay, and
// its frames go direct once that peer has dialed it; a relay passes on no more than the
// requester's message rate. With CURVE, what a relay passes on is a box between the two
// ends: the relay sees no byte of it in clear, and a box it alters, replays or makes under
// another key than the origin's is dropped.
#define BOOST_TEST_MODULE gossip_relay
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

// Raw ZeroMQ: the forged relay requests below come from a socket of their own.
#include <zmq.hpp>

#include "gossip/transport/error.h"
#include "gossip/transport/link.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"
#include "gossip/transport/zmq/curve_pairs.h"
#include "protocols/frame.h"

using namespace starling::gossip;
using namespace starling::protocols;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<Transport> peer(TransportContext& context, PeerId self, bool behind_nat, bool swarm = false,
                                std::uint32_t max_messages_per_second = 0) {
  TransportOptions o;
  o.max_messages_per_second = max_messages_per_second;
  o.self = self;
  o.bind_endpoint = "tcp://127.0.0.1:*";  // bound, but nobody dials a peer behind NAT
  o.linger_ms = 200;
  o.behind_nat = behind_nat;
  o.accept_unknown_hello = swarm;  // a swarm's peers hear newcomers' hellos
  return std::make_unique<Transport>(context, o);
}

// A peer with CURVE: its own pair, admitting the clients in `allowed`.
std::unique_ptr<Transport> curve_peer(TransportContext& context, PeerId self, bool behind_nat, const CurveKeyPair& keys,
                                      const std::vector<std::string>& allowed) {
  TransportOptions o;
  o.self = self;
  o.bind_endpoint = "tcp://127.0.0.1:*";
  o.linger_ms = 200;
  o.behind_nat = behind_nat;
  o.curve = CurveSecurity{keys, allowed, {}, {}, false};
  return std::make_unique<Transport>(context, o);
}

FrameHeader push_header(std::uint64_t round) {
  FrameHeader h;
  h.type = MessageType::gossip_push;
  h.round = round;
  return h;
}

// A transport counts what it sent or passed on just after the send, so a receiver can see a
// frame before its sender's stats do: stats are read once `ready` holds, or after 2 s.
template <class Ready>
TransportStats await_stats(const Transport& t, Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  for (;;) {
    TransportStats s = t.stats();
    if (ready(s) || std::chrono::steady_clock::now() > deadline) return s;
    std::this_thread::sleep_for(2ms);
  }
}

std::uint64_t relayed_for_others(const Transport& t) {
  return await_stats(t, [](const TransportStats& s) { return s.relayed_for_others > 0; }).relayed_for_others;
}

std::uint64_t await_drops(const Transport& t, const std::string& reason) {
  const TransportStats s = await_stats(t, [&](const TransportStats& s) { return s.drops.count(reason) > 0; });
  const auto it = s.drops.find(reason);
  return it == s.drops.end() ? 0 : it->second;
}

// Relays 0 and 5, peers 1 and 2 behind NAT, each dialing both relays.
struct Swarm {
  TransportContext context;
  std::unique_ptr<Transport> relay0 = peer(context, 0, false), relay5 = peer(context, 5, false);
  std::unique_ptr<Transport> nat1 = peer(context, 1, true), nat2 = peer(context, 2, true);

  Swarm() {
    for (Transport* r : {relay0.get(), relay5.get()})
      for (PeerId n : {1u, 2u}) r->connect(n, kBehindNat);
    for (Transport* n : {nat1.get(), nat2.get()}) {
      n->connect(0, relay0->endpoint());
      n->connect(5, relay5->endpoint());
    }
    nat1->connect(2, kBehindNat);
    nat2->connect(1, kBehindNat);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_peer_behind_nat_is_reached_over_the_connection_it_dialed) {
  TransportContext context;
  auto reachable = peer(context, 0, false);
  auto nat = peer(context, 1, true);
  reachable->connect(1, kBehindNat);
  reachable->send(1, push_header(7), ByteSpan());  // held: peer 1 has not dialed in yet
  std::this_thread::sleep_for(50ms);
  nat->connect(0, reachable->endpoint());
  const Message first = nat->receive(5s);
  BOOST_TEST(first.from == 0u);
  BOOST_TEST(first.header.round == 7u);
  nat->send(0, push_header(8), ByteSpan());
  BOOST_TEST(reachable->receive(5s).header.round == 8u);
  BOOST_TEST(reachable->stats().relayed_for_others == 0u);
  BOOST_TEST(nat->stats().sent_through_relay == 0u);
}

BOOST_AUTO_TEST_CASE(peers_behind_nat_reach_each_other_through_a_relay_in_order) {
  Swarm s;
  const std::vector<std::uint8_t> payload(3000, 9);
  for (int round = 0; round < 50; ++round) s.nat1->send(2, push_header(round), ByteSpan(payload));
  for (int round = 0; round < 50; ++round) {
    const Message m = s.nat2->receive(5s);
    BOOST_TEST(m.from == 1u);
    BOOST_TEST(m.header.round == static_cast<std::uint64_t>(round));
    BOOST_TEST(m.payload.size() == payload.size());
  }
  const std::uint64_t bytes = 50 * (kHeaderSize + payload.size());
  const auto all_relayed = [&](const TransportStats& t) { return t.relayed_for_others == bytes; };
  const auto all_sent = [&](const TransportStats& t) { return t.sent_through_relay == bytes; };
  BOOST_TEST(await_stats(*s.relay0, all_relayed).relayed_for_others == bytes);  // the lowest dialed id relays
  BOOST_TEST(s.relay5->stats().relayed_for_others == 0u);
  BOOST_TEST(await_stats(*s.nat1, all_sent).sent_through_relay == bytes);
  s.nat2->send(1, push_header(99), ByteSpan());
  BOOST_TEST(s.nat1->receive(5s).header.round == 99u);
}

BOOST_AUTO_TEST_CASE(a_reachable_newcomers_hello_reaches_a_peer_behind_nat_through_a_relay) {
  TransportContext context;
  auto member = peer(context, 0, false, true);
  auto nat = peer(context, 1, true, true);
  auto newcomer = peer(context, 7, false, true);
  member->connect(1, kBehindNat);
  nat->connect(0, member->endpoint());
  newcomer->connect(0, member->endpoint());
  newcomer->connect(1, kBehindNat);  // peer 1 has not dialed the newcomer
  FrameHeader hello;
  hello.type = MessageType::hello;
  newcomer->send(1, hello, ByteSpan());
  newcomer->send(1, push_header(4), ByteSpan());  // data waits for the direct route
  const Message first = nat->receive(5s);
  BOOST_TEST(first.from == 7u);
  BOOST_TEST((first.header.type == MessageType::hello));
  BOOST_TEST(relayed_for_others(*member) > 0u);
  BOOST_TEST(newcomer->stats().sent_through_relay == 0u);  // a hello, not the newcomer's traffic
  nat->connect(7, newcomer->endpoint());  // as the swarm's control plane does on a newcomer's hello
  BOOST_TEST(nat->receive(5s).header.round == 4u);
  const std::uint64_t relayed = member->stats().relayed_for_others;
  newcomer->send(1, push_header(5), ByteSpan());
  BOOST_TEST(nat->receive(5s).header.round == 5u);
  BOOST_TEST(member->stats().relayed_for_others == relayed);
}

BOOST_AUTO_TEST_CASE(a_relay_passes_on_no_more_than_the_requesters_message_rate) {
  TransportContext context;
  auto relay = peer(context, 0, false, false, 100);  // 100 messages a second from each peer
  auto nat1 = peer(context, 1, true), nat2 = peer(context, 2, true);
  for (PeerId n : {1u, 2u}) relay->connect(n, kBehindNat);
  for (Transport* n : {nat1.get(), nat2.get()}) n->connect(0, relay->endpoint());
  nat1->connect(2, kBehindNat);
  nat2->connect(1, kBehindNat);
  nat2->send(0, push_header(0), ByteSpan());  // nat2 has dialed in: the relay can reach it
  BOOST_TEST(relay->receive(5s).header.round == 0u);
  for (int round = 1; round <= 1000; ++round) nat1->send(2, push_header(round), ByteSpan());
  int received = 0;
  while (nat2->try_receive(std::chrono::steady_clock::now() + 500ms)) ++received;
  BOOST_TEST(received >= 50);    // a second's burst goes through
  BOOST_TEST(received <= 300);   // the rest of the flood does not
  BOOST_TEST(await_drops(*relay, "rate_limited") >= 600u);
}

BOOST_AUTO_TEST_CASE(the_next_relay_takes_over_once_the_first_is_gone) {
  Swarm s;
  s.nat1->send(2, push_header(1), ByteSpan());
  BOOST_TEST(s.nat2->receive(5s).header.round == 1u);
  s.relay0->stop();
  for (Transport* n : {s.nat1.get(), s.nat2.get()}) n->disconnect(0);  // as failure detection would
  s.nat1->send(2, push_header(2), ByteSpan());
  BOOST_TEST(s.nat2->receive(5s).header.round == 2u);
  BOOST_TEST(relayed_for_others(*s.relay5) > 0u);
}

BOOST_AUTO_TEST_CASE(a_relay_passes_on_only_between_known_peers_and_origins_must_match) {
  Swarm s;
  zmq::context_t raw;
  auto request = [&](const std::string& identity, PeerId to, PeerId sender) {
    zmq::socket_t dealer(raw, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 200);
    dealer.set(zmq::sockopt::routing_id, identity);
    dealer.connect(s.relay0->endpoint());
    const std::uint8_t envelope[8] = {'S', 'R', 'L', '>', static_cast<std::uint8_t>(to), 0, 0, 0};
    FrameHeader h = push_header(3);
    h.sender = sender;
    std::vector<std::uint8_t> head;
    encode_header_for(h, {}, head);
    dealer.send(zmq::buffer(envelope), zmq::send_flags::sndmore);
    dealer.send(zmq::buffer(head), zmq::send_flags::sndmore);
    dealer.send(zmq::message_t(), zmq::send_flags::none);
    std::this_thread::sleep_for(50ms);
  };
  request("9", 2, 9);  // a stranger asks for a relay
  BOOST_TEST(await_drops(*s.relay0, "unknown_sender") == 1u);
  request("1", 7, 1);  // to a peer the relay does not know
  BOOST_TEST(await_drops(*s.relay0, "relay_refused") == 1u);
  request("1", 2, 5);  // peer 1 claims to pass on peer 5's frame
  BOOST_TEST(await_drops(*s.nat2, "sender_mismatch") == 1u);
  BOOST_CHECK_THROW(s.nat2->receive(50ms), TimeoutError);
}

namespace {

const std::string kSecret = "a secret gradient, for peer 2's eyes only";

// Peers 1 and 2 behind NAT with CURVE, whose relay, peer 0, is `relay_key`'s.
struct CurvePair {
  TransportContext context;
  CurveKeyPair k1 = generate_keypair(), k2 = generate_keypair();
  std::unique_ptr<Transport> nat1 = curve_peer(context, 1, true, k1, {}), nat2 = curve_peer(context, 2, true, k2, {});

  CurvePair(const std::string& relay_endpoint, const std::string& relay_key) {
    nat1->connect(0, relay_endpoint, relay_key);
    nat2->connect(0, relay_endpoint, relay_key);
    nat1->connect(2, kBehindNat, k2.public_key);
    nat2->connect(1, kBehindNat, k1.public_key);
  }
};

std::vector<std::uint8_t> secret_bytes() { return std::vector<std::uint8_t>(kSecret.begin(), kSecret.end()); }

bool holds(const zmq::message_t& m, const std::string& text) {
  const char* data = static_cast<const char*>(m.data());
  return std::search(data, data + m.size(), text.begin(), text.end()) != data + m.size();
}

}  // namespace

BOOST_AUTO_TEST_CASE(peers_behind_nat_with_curve_reach_each_other_through_a_relay_in_boxes) {
  TransportContext context;
  // The relay admits both peers' keys.
  const CurveKeyPair k0 = generate_keypair(), k1 = generate_keypair(), k2 = generate_keypair();
  auto relay = curve_peer(context, 0, false, k0, {k1.public_key, k2.public_key});
  auto nat1 = curve_peer(context, 1, true, k1, {}), nat2 = curve_peer(context, 2, true, k2, {});
  relay->connect(1, kBehindNat, k1.public_key);
  relay->connect(2, kBehindNat, k2.public_key);
  nat1->connect(0, relay->endpoint(), k0.public_key);
  nat2->connect(0, relay->endpoint(), k0.public_key);
  nat1->connect(2, kBehindNat, k2.public_key);
  nat2->connect(1, kBehindNat, k1.public_key);
  const std::vector<std::uint8_t> payload = secret_bytes();
  for (int round = 0; round < 30; ++round) nat1->send(2, push_header(round), ByteSpan(payload));
  for (int round = 0; round < 30; ++round) {
    const Message m = nat2->receive(5s);
    BOOST_TEST(m.from == 1u);
    BOOST_TEST(m.header.round == static_cast<std::uint64_t>(round));
    BOOST_TEST(std::string(m.bytes().begin(), m.bytes().end()) == kSecret);
    BOOST_TEST(peer_public_key(m).value_or("") == k1.public_key);  // the box's origin, not the relay
  }
  BOOST_TEST(relayed_for_others(*relay) > 0u);
  nat2->send(1, push_header(99), ByteSpan());
  BOOST_TEST(nat1->receive(5s).header.round == 99u);
}

// A relay of raw ZeroMQ (a CURVE server of its own context, which has no ZAP handler and so
// admits every key) reads what the peers ask it to pass on, alters, replays and forges it.
BOOST_AUTO_TEST_CASE(a_relay_sees_only_boxes_and_cannot_alter_replay_or_forge_them) {
  zmq::context_t raw;
  const CurveKeyPair kr = generate_keypair();
  zmq::socket_t relay(raw, zmq::socket_type::router);
  relay.set(zmq::sockopt::linger, 0);
  relay.set(zmq::sockopt::curve_server, true);
  relay.set(zmq::sockopt::curve_secretkey, kr.secret_key);
  relay.set(zmq::sockopt::rcvtimeo, 5000);
  relay.set(zmq::sockopt::router_handover, true);  // the impostor below takes over id 1's route
  relay.bind("tcp://127.0.0.1:*");
  CurvePair p(relay.get(zmq::sockopt::last_endpoint), kr.public_key);
  // What one peer asks the relay to pass on: [routing id][envelope][box][empty].
  auto take = [&] {
    std::vector<zmq::message_t> frames;
    do {
      frames.emplace_back();
      BOOST_REQUIRE(relay.recv(frames.back()));  // within rcvtimeo
    } while (frames.back().more());
    BOOST_REQUIRE(frames.size() == 4u);
    return frames;
  };
  auto pass_on = [&](PeerId from, const zmq::message_t& box) {
    const std::uint8_t envelope[8] = {'S', 'R', 'L', '<', static_cast<std::uint8_t>(from), 0, 0, 0};
    relay.send(zmq::buffer(std::to_string(from == 1 ? 2 : 1)), zmq::send_flags::sndmore);
    relay.send(zmq::buffer(envelope), zmq::send_flags::sndmore);
    relay.send(zmq::buffer(box.data(), box.size()), zmq::send_flags::sndmore);
    relay.send(zmq::message_t(), zmq::send_flags::none);
  };
  p.nat2->send(1, push_header(0), ByteSpan());  // peer 2 has dialed in: the relay can reach it
  take();
  const std::vector<std::uint8_t> payload = secret_bytes();
  p.nat1->send(2, push_header(7), ByteSpan(payload));
  const std::vector<zmq::message_t> asked = take();
  BOOST_TEST(asked[1].to_string() == std::string("SRL>\x02\0\0\0", 8));
  BOOST_TEST(!holds(asked[2], kSecret));  // the relay cannot read it
  BOOST_TEST(asked[3].size() == 0u);
  zmq::message_t altered(asked[2].data(), asked[2].size());
  static_cast<std::uint8_t*>(altered.data())[altered.size() - 1] ^= 1;
  pass_on(1, altered);
  BOOST_TEST(await_drops(*p.nat2, "relay_box_failed") == 1u);
  pass_on(1, asked[2]);
  const Message m = p.nat2->receive(5s);
  BOOST_TEST(m.header.round == 7u);
  BOOST_TEST(std::string(m.bytes().begin(), m.bytes().end()) == kSecret);
  pass_on(1, asked[2]);
  BOOST_TEST(await_drops(*p.nat2, "relay_replayed") == 1u);
  // A peer that claims id 1 under a key of its own: its box opens under that key alone.
  TransportContext context;
  auto impostor = curve_peer(context, 1, true, generate_keypair(), {});
  impostor->connect(0, relay.get(zmq::sockopt::last_endpoint), kr.public_key);
  impostor->connect(2, kBehindNat, p.k2.public_key);
  impostor->send(2, push_header(8), ByteSpan(payload));
  pass_on(1, take()[2]);
  BOOST_TEST(await_drops(*p.nat2, "key_mismatch") == 1u);
  BOOST_CHECK_THROW(p.nat2->receive(50ms), TimeoutError);
}
