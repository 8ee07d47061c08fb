// Membership on real sockets over 127.0.0.1: a silent peer (its transport stopped) is
// declared dead within the failure timeout, a peer that says leave is dead at once,
// receive_data hands over data while heartbeats are consumed, and the hello join
// handshake over CURVE returns the seed's view.
#define BOOST_TEST_MODULE gossip_membership
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "gossip/control/join.h"
#include "gossip/control/membership.h"
#include "gossip/transport/curve_keys.h"
#include "gossip/transport/error.h"
#include "gossip/transport/transport_context.h"
#include "gossip/transport/zmq/curve_pairs.h"
#include "peer_group.h"

using namespace starling::gossip;
using namespace starling::protocols;
using starling::gossip::testing::PeerGroup;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

const MembershipOptions kFast{100ms, 500ms};

// One step of a peer's owner loop: due heartbeats and timeouts, then everything queued.
void pump(Transport& t, Membership& m) {
  m.poll(Clock::now());
  while (std::optional<Message> msg = t.try_receive()) m.observe(*msg, Clock::now());
}

// Pumps the given peers every 5 ms until `watcher` reports a change or the deadline.
std::optional<ViewChange> await_change(Membership& watcher, std::vector<std::pair<Transport*, Membership*>> peers,
                                       Clock::duration limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    for (auto& [t, m] : peers) pump(*t, *m);
    std::vector<ViewChange> changes = watcher.take_changes();
    if (!changes.empty()) return changes.front();
    std::this_thread::sleep_for(5ms);
  }
  return std::nullopt;
}

Hello shape(const std::string& endpoint) {
  Hello h;
  h.parameter_count = 30;
  h.tensor_sizes = {10, 20};
  h.endpoint = endpoint;
  return h;
}

}  // namespace

BOOST_AUTO_TEST_CASE(silent_peer_is_declared_dead_within_the_timeout) {
  PeerGroup group(2);
  group.connect_all();
  Membership a(group.at(0), kFast), b(group.at(1), kFast);
  a.track(1, Clock::now());
  b.track(0, Clock::now());
  // Both alive for a while: heartbeats keep the view stable.
  BOOST_TEST(!await_change(a, {{&group.at(0), &a}, {&group.at(1), &b}}, 700ms).has_value());
  BOOST_TEST(a.alive(1));
  group.at(1).stop();
  const auto stopped = Clock::now();
  const std::optional<ViewChange> change = await_change(a, {{&group.at(0), &a}}, 3s);
  const auto detected = Clock::now();
  BOOST_REQUIRE(change.has_value());
  BOOST_TEST(change->peer == 1u);
  BOOST_TEST((change->state == PeerState::dead));
  BOOST_TEST(change->reason.find("no message for") != std::string::npos, change->reason);
  const double since_last = std::chrono::duration<double>(detected - a.peers().at(1).last_seen).count();
  const double since_stop = std::chrono::duration<double>(detected - stopped).count();
  BOOST_TEST(since_last >= 0.5);
  BOOST_TEST(since_last <= 2.0);
  // The last heartbeat may have left up to one interval before the stop.
  BOOST_TEST(since_stop >= 0.4);
  BOOST_TEST(since_stop <= 2.0);
}

BOOST_AUTO_TEST_CASE(peer_that_leaves_is_dead_at_once) {
  PeerGroup group(2);
  group.connect_all();
  Membership a(group.at(0), kFast), b(group.at(1), kFast);
  a.track(1, Clock::now());
  b.track(0, Clock::now());
  b.leave(LeaveReason::shutdown);
  const auto sent = Clock::now();
  const std::optional<ViewChange> change = await_change(a, {{&group.at(0), &a}}, 2s);
  BOOST_REQUIRE(change.has_value());
  BOOST_TEST((change->state == PeerState::dead));
  BOOST_TEST(change->reason == "left: shutdown");
  BOOST_TEST(std::chrono::duration<double>(Clock::now() - sent).count() < 0.3);
  BOOST_TEST(!a.alive(1));
}

BOOST_AUTO_TEST_CASE(receive_data_consumes_heartbeats_and_returns_data) {
  PeerGroup group(2);
  group.connect_all();
  Membership a(group.at(0), kFast), b(group.at(1), kFast);
  a.track(1, Clock::now());
  b.track(0, Clock::now());
  b.poll(Clock::now());  // a heartbeat first
  FrameHeader pull;
  pull.type = MessageType::gossip_pull;
  group.at(1).send(0, pull, ByteSpan{});
  const Message m = receive_data(group.at(0), a, Clock::now() + 2s);
  BOOST_TEST((m.header.type == MessageType::gossip_pull));
  BOOST_TEST(a.malformed() == 0u);
  BOOST_TEST(a.alive(1));
  BOOST_CHECK_THROW(receive_data(group.at(0), a, Clock::now() + 250ms), TimeoutError);
  BOOST_TEST(a.take_changes().empty());
}

BOOST_AUTO_TEST_CASE(bad_intervals_are_rejected) {
  PeerGroup group(1);
  BOOST_CHECK_THROW(Membership(group.at(0), MembershipOptions{500ms, 100ms}), InvalidArgument);
  BOOST_CHECK_THROW(Membership(group.at(0), MembershipOptions{0ms, 100ms}), InvalidArgument);
}

BOOST_AUTO_TEST_CASE(join_over_curve_returns_the_seed_view) {
  TransportContext context;
  const CurveKeyPair seed_keys = generate_keypair(), joiner_keys = generate_keypair();
  TransportOptions os;
  os.self = 0;
  os.linger_ms = 0;
  os.accept_unknown_hello = true;
  os.curve = CurveSecurity{seed_keys, {joiner_keys.public_key}, {}, {}};
  TransportOptions oj;
  oj.self = 5;
  oj.linger_ms = 0;
  oj.curve = CurveSecurity{joiner_keys, {seed_keys.public_key}, {}, {}};
  Transport seed(context, os), joiner(context, oj);
  Membership ms(seed, kFast), mj(joiner, kFast);
  ms.track(7, Clock::now(), "tcp://127.0.0.1:7777", generate_keypair().public_key);  // another member

  joiner.connect(0, seed.endpoint(), seed_keys.public_key);
  request_join(joiner, 0, shape(joiner.endpoint()));
  const Message request = receive_data(seed, ms, Clock::now() + 3s);
  BOOST_REQUIRE(is_join_request(request.header));
  BOOST_TEST((answer_join(seed, ms, request, shape(seed.endpoint())) == JoinStatus::accepted));
  BOOST_TEST(ms.alive(5));
  BOOST_TEST(ms.peers().at(5).public_key == joiner_keys.public_key);

  const JoinReply reply = await_join_reply(joiner, mj, 0, Clock::now() + 3s);
  BOOST_TEST((reply.status == JoinStatus::accepted));
  BOOST_REQUIRE(reply.view.size() == 2u);
  BOOST_TEST(reply.view[0].peer == 0u);
  BOOST_TEST(reply.view[0].endpoint == seed.endpoint());
  BOOST_TEST(reply.view[0].public_key == seed_keys.public_key);
  BOOST_TEST(reply.view[1].peer == 7u);
  BOOST_TEST(mj.alive(0));
}

BOOST_AUTO_TEST_CASE(join_with_another_shape_is_refused) {
  PeerGroup group(2);
  group.connect_all();
  Membership ms(group.at(0), kFast), mj(group.at(1), kFast);
  Hello other = shape(group.at(1).endpoint());
  other.tensor_sizes = {30};
  request_join(group.at(1), 0, other);
  const Message request = receive_data(group.at(0), ms, Clock::now() + 3s);
  BOOST_TEST((answer_join(group.at(0), ms, request, shape(group.at(0).endpoint())) == JoinStatus::shape_mismatch));
  BOOST_TEST(!ms.alive(1));
  const JoinReply reply = await_join_reply(group.at(1), mj, 0, Clock::now() + 3s);
  BOOST_TEST((reply.status == JoinStatus::shape_mismatch));
  BOOST_TEST(reply.view.empty());
}

BOOST_AUTO_TEST_CASE(join_reply_decoder_rejects_garbage) {
  JoinReply reply;
  reply.view.push_back({3, "tcp://10.77.0.2:5555", generate_keypair().public_key});
  std::vector<std::uint8_t> bytes;
  BOOST_REQUIRE((encode_join_reply(reply, bytes) == Error::ok));
  BOOST_TEST(decode_join_reply(bytes).ok());
  for (std::size_t cut = 0; cut < bytes.size(); ++cut)
    BOOST_TEST(!decode_join_reply(ByteSpan(bytes.data(), cut)).ok());
  bytes.push_back(0);
  BOOST_TEST((decode_join_reply(bytes).error() == Error::oversized));
  reply.view[0].public_key = "not a key";
  BOOST_TEST((encode_join_reply(reply, bytes) == Error::invalid_option));
}

// An open swarm names the first job-defining key whose value differs (gossip/control/join.h),
// or one that only one side has.
BOOST_AUTO_TEST_CASE(a_job_description_difference_names_the_first_differing_key) {
  const std::string ours = "model.kind=mlp\noptimizer.lr=0.05\nexchange.mode=allreduce\n";
  BOOST_TEST(description_difference(ours, ours).empty());
  BOOST_TEST(description_difference(ours, "model.kind=mlp\noptimizer.lr=0.2\nexchange.mode=gossip\n") ==
             "optimizer.lr: 0.05 here, 0.2 in the joiner's config");
  BOOST_TEST(description_difference(ours, "model.kind=mlp\noptimizer.lr=0.05\n") ==
             "exchange.mode: allreduce here, missing from the joiner's config");
  BOOST_TEST(description_difference(ours, ours + "swarm.extra=1\n") == "swarm.extra: unknown here, 1 in the joiner's config");
}

// The bootstrap messages survive their encoding, and a truncated one does not decode.
BOOST_AUTO_TEST_CASE(bootstrap_messages_round_trip) {
  const BootstrapRequest q{"starling-invitation 1\n...", "model.kind=mlp\n", "tcp://127.0.0.1:5700"};
  std::vector<std::uint8_t> bytes;
  BOOST_TEST((encode_bootstrap_request(q, bytes) == Error::ok));
  const auto back = decode_bootstrap_request(ByteSpan(bytes.data(), bytes.size()));
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->invitation == q.invitation);
  BOOST_TEST(back->description == q.description);
  BOOST_TEST(back->endpoint == q.endpoint);
  BOOST_TEST(!decode_bootstrap_request(ByteSpan(bytes.data(), bytes.size() - 1)).ok());
  const BootstrapReply r{BootstrapStatus::accepted, 7, "", {{0, "tcp://127.0.0.1:5700", ""}, {3, "tcp://127.0.0.1:5703", ""}}};
  BOOST_TEST((encode_bootstrap_reply(r, bytes) == Error::ok));
  const auto reply = decode_bootstrap_reply(ByteSpan(bytes.data(), bytes.size()));
  BOOST_REQUIRE(reply.ok());
  BOOST_TEST((reply->status == BootstrapStatus::accepted));
  BOOST_TEST(reply->id == 7u);
  BOOST_TEST(reply->view.size() == 2u);
  BOOST_TEST(reply->view[1].endpoint == "tcp://127.0.0.1:5703");
}
