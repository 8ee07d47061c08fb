// The ZeroMQ transport on 127.0.0.1: delivery, per-peer byte counts, deadlines, typed
// errors, and garbage frames dropped and counted by reason without harming the peer;
// heartbeats from the I/O thread and the liveness they leave, the rate cap, raw fp32 frames
// with NaN, and the receive hook with messages put back.
#define BOOST_TEST_MODULE gossip_transport
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

// Raw ZeroMQ: the garbage below comes from sockets of its own, not from a Transport.
#include <zmq.hpp>

#include "gossip/transport/error.h"
#include "peer_group.h"
#include "protocols/frame.h"

using namespace starling::gossip;
using namespace starling::protocols;
using starling::gossip::testing::PeerGroup;
using namespace std::chrono_literals;

namespace {

FrameHeader push_header(std::uint64_t round, std::size_t floats) {
  FrameHeader h;
  h.type = MessageType::gossip_push;
  h.round = round;
  h.tensor_length = floats;
  return h;
}

std::vector<std::uint8_t> header_bytes(FrameHeader h, const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> out;
  encode_header_for(h, payload, out);
  return out;
}

// Polls the stats until `reason` reaches count or two seconds pass.
std::uint64_t await_drops(Transport& t, const std::string& reason, std::uint64_t count) {
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  for (;;) {
    const TransportStats s = t.stats();
    const auto it = s.drops.find(reason);
    const std::uint64_t seen = it == s.drops.end() ? 0 : it->second;
    if (seen >= count || std::chrono::steady_clock::now() > deadline) return seen;
    std::this_thread::sleep_for(2ms);
  }
}

// Sends raw multipart messages to a ROUTER as if from a DEALER with the given routing id.
class RawDealer {
 public:
  RawDealer(zmq::context_t& context, const std::string& identity, const std::string& endpoint)
      : socket_(context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::routing_id, identity);
    socket_.connect(endpoint);
  }
  void send(const std::vector<std::vector<std::uint8_t>>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i)
      socket_.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }

 private:
  zmq::socket_t socket_;
};

}  // namespace

BOOST_AUTO_TEST_CASE(delivers_in_order_and_counts_bytes_per_peer) {
  PeerGroup group(2);
  group.connect(0, 1);
  const std::vector<std::uint8_t> payload(4000, 7);
  for (int i = 0; i < 10; ++i) group.at(0).send(1, push_header(i, 1000), ByteSpan(payload));
  for (int i = 0; i < 10; ++i) {
    const Message m = group.at(1).receive(5s);
    BOOST_TEST(m.from == 0u);
    BOOST_TEST(m.header.sender == 0u);
    BOOST_TEST(m.header.round == static_cast<std::uint64_t>(i));
    BOOST_TEST(m.payload.size() == payload.size());
  }
  const TransportStats received = group.at(1).stats();
  BOOST_TEST(received.peers.at(0).bytes_received == 10 * (kHeaderSize + payload.size()));
  BOOST_TEST(received.peers.at(0).messages_received == 10u);
  BOOST_TEST(received.dropped() == 0u);
  // The sender counts a frame just after sending it, so its count may trail the receiver's.
  const std::uint64_t bytes = 10 * (kHeaderSize + payload.size());
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (group.at(0).stats().peers.at(1).bytes_sent < bytes && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(2ms);
  BOOST_TEST(group.at(0).stats().peers.at(1).bytes_sent == bytes);
}

// A route closed by disconnect() is gone (a send to the peer is misuse again), can be opened
// anew, and carries frames as before.
BOOST_AUTO_TEST_CASE(a_disconnected_route_can_be_opened_again) {
  PeerGroup group(2);
  group.connect(0, 1);
  group.at(0).disconnect(1);
  BOOST_TEST(!group.at(0).connected_to(1));
  BOOST_CHECK_THROW(group.at(0).send(1, push_header(0, 0), ByteSpan()), InvalidArgument);
  group.at(0).disconnect(1);  // none: nothing
  group.connect(0, 1);
  group.at(0).send(1, push_header(3, 0), ByteSpan());
  BOOST_TEST(group.at(1).receive(5s).header.round == 3u);
}

BOOST_AUTO_TEST_CASE(receive_times_out_with_a_typed_error) {
  PeerGroup group(1);
  const auto start = std::chrono::steady_clock::now();
  BOOST_CHECK_THROW(group.at(0).receive(50ms), TimeoutError);
  BOOST_TEST((std::chrono::steady_clock::now() - start < 2s));
}

BOOST_AUTO_TEST_CASE(misuse_is_reported_as_typed_errors) {
  PeerGroup group(2);
  BOOST_CHECK_THROW(group.at(0).send(1, push_header(0, 0), ByteSpan()), InvalidArgument);
  group.connect(0, 1);
  BOOST_CHECK_THROW(group.connect(0, 1), InvalidArgument);
  TransportContext context;
  TransportOptions o;
  o.bind_endpoint = group.at(0).endpoint();  // already bound by peer 0
  BOOST_CHECK_THROW(Transport(context, o), IoError);
  o.bind_endpoint = "bogus://nowhere";
  BOOST_CHECK_THROW(Transport(context, o), IoError);
  BOOST_CHECK_THROW(group.at(1).connect(0, "bogus://nowhere"), IoError);
}

BOOST_AUTO_TEST_CASE(garbage_frames_are_dropped_and_counted) {
  PeerGroup group(1);
  Transport& peer = group.at(0);
  peer.accept_from(5);
  zmq::context_t context;
  RawDealer known(context, "5", peer.endpoint());
  const std::vector<std::uint8_t> payload(64, 1);
  const std::vector<std::uint8_t> good = header_bytes([] { auto h = push_header(3, 16); h.sender = 5; return h; }(), payload);

  known.send({{1, 2, 3}});                                    // one frame
  known.send({{1, 2, 3}, payload});                           // short header
  std::vector<std::uint8_t> bad_magic = good;
  bad_magic[0] ^= 0xFF;
  known.send({bad_magic, payload});
  std::vector<std::uint8_t> corrupt = payload;
  corrupt[10] ^= 1;
  known.send({good, corrupt});                                // CRC mismatch
  known.send({good, std::vector<std::uint8_t>(65, 1)});      // longer than declared
  known.send({header_bytes(push_header(3, 16), payload), payload});  // claims sender 0
  RawDealer stranger(context, "99", peer.endpoint());
  stranger.send({good, payload});
  RawDealer odd(context, "x5", peer.endpoint());
  odd.send({good, payload});

  // Raw bytes that are not even ZMTP: libzmq closes the connection, the peer carries on.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(peer.endpoint().substr(peer.endpoint().rfind(':') + 1))));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const char junk[] = "GET / HTTP/1.0\r\n\r\n\xff\xff\xff\xff";
    BOOST_TEST(::write(fd, junk, sizeof junk) > 0);
  }
  ::close(fd);

  BOOST_TEST(await_drops(peer, "frame_count", 1) == 1u);
  BOOST_TEST(await_drops(peer, "truncated", 1) == 1u);
  BOOST_TEST(await_drops(peer, "bad_magic", 1) == 1u);
  BOOST_TEST(await_drops(peer, "crc_mismatch", 1) == 1u);
  BOOST_TEST(await_drops(peer, "oversized", 1) == 1u);
  BOOST_TEST(await_drops(peer, "sender_mismatch", 1) == 1u);
  BOOST_TEST(await_drops(peer, "unknown_sender", 1) == 1u);
  BOOST_TEST(await_drops(peer, "bad_identity", 1) == 1u);

  // Still serving: a valid message after all that arrives intact.
  known.send({good, payload});
  const Message m = peer.receive(5s);
  BOOST_TEST(m.from == 5u);
  BOOST_TEST(m.header.round == 3u);
  BOOST_TEST(peer.stats().dropped() == 8u);
  BOOST_CHECK_THROW(peer.receive(20ms), TimeoutError);  // none of the garbage got through
}

BOOST_AUTO_TEST_CASE(io_thread_heartbeats_prove_liveness_and_are_consumed) {
  TransportContext context;
  std::vector<std::unique_ptr<Transport>> peers;
  for (PeerId id : {0u, 1u}) {
    TransportOptions o;
    o.self = id;
    o.accept = {0, 1};
    o.heartbeat_interval = 20ms;
    o.linger_ms = 0;
    peers.push_back(std::make_unique<Transport>(context, o));
  }
  peers[0]->connect(1, peers[1]->endpoint());
  peers[0]->announce(3, 17);
  std::this_thread::sleep_for(200ms);
  const auto heard = peers[1]->liveness();
  BOOST_TEST_REQUIRE(heard.count(0) == 1u);
  BOOST_TEST(heard.at(0).heartbeat);
  BOOST_TEST(heard.at(0).view == 3u);
  BOOST_TEST(heard.at(0).round == 17u);
  BOOST_TEST((std::chrono::steady_clock::now() - heard.at(0).last_heard < 150ms));
  BOOST_CHECK_THROW(peers[1]->receive(30ms), TimeoutError);  // no heartbeat reached the inbox
  // Heartbeats are control messages: all that 1 heard from 0, and some of what 0 sent.
  const TransportStats got = peers[1]->stats();
  BOOST_TEST(got.control_received == got.peers.at(0).messages_received);
  BOOST_TEST(got.control_received >= 2u);
  BOOST_TEST(peers[0]->stats().control_sent >= got.control_received);
  // A gossip push is data.
  peers[0]->send(1, push_header(0, 4), ByteSpan(std::vector<std::uint8_t>(16, 0)));
  peers[1]->receive(5s);
  const TransportStats after = peers[1]->stats();
  BOOST_TEST(after.peers.at(0).messages_received - after.control_received == 1u);
}

BOOST_AUTO_TEST_CASE(rate_cap_and_non_finite_raw_floats_are_dropped) {
  TransportContext context;
  TransportOptions o;
  o.accept = {5};
  o.max_messages_per_second = 100;
  Transport peer(context, o);
  zmq::context_t raw;
  RawDealer known(raw, "5", peer.endpoint());
  std::vector<std::uint8_t> nan_payload(64, 0);
  const float nan = std::nanf("");
  std::memcpy(nan_payload.data() + 8, &nan, sizeof nan);
  FrameHeader h = push_header(1, 16);
  h.sender = 5;
  known.send({header_bytes(h, nan_payload), nan_payload});
  BOOST_TEST(await_drops(peer, "non_finite", 1) == 1u);
  const std::vector<std::uint8_t> payload(64, 1);
  for (int i = 0; i < 400; ++i) known.send({header_bytes(h, payload), payload});
  BOOST_TEST(await_drops(peer, "rate_limited", 250) >= 250u);
  std::size_t delivered = 0;
  while (peer.try_receive(std::chrono::steady_clock::now() + 50ms)) ++delivered;
  BOOST_TEST(delivered >= 90u);
  BOOST_TEST(delivered <= 150u);  // one second's burst, and what refilled meanwhile
}

BOOST_AUTO_TEST_CASE(hook_sees_every_message_and_put_back_keeps_order) {
  struct Counting : ReceiveHook {
    int seen = 0, idles = 0;
    bool intercept(Message& m) override { return ++seen, m.header.round == 0; }  // consumes round 0
    void idle() override { ++idles; }
  } hook;
  PeerGroup group(2);
  group.connect(0, 1);
  group.at(1).set_hook(&hook, 5ms);
  const std::vector<std::uint8_t> payload(4, 0);
  for (int i = 0; i < 3; ++i) group.at(0).send(1, push_header(i, 1), ByteSpan(payload));
  Message first = group.at(1).receive(2s);
  BOOST_TEST(first.header.round == 1u);
  std::vector<Message> back;
  back.push_back(std::move(first));
  group.at(1).put_back(std::move(back));
  BOOST_TEST(group.at(1).receive(2s).header.round == 1u);
  BOOST_TEST(group.at(1).receive(2s).header.round == 2u);
  BOOST_CHECK_THROW(group.at(1).receive(30ms), TimeoutError);
  BOOST_TEST(hook.idles > 0);
  group.at(1).set_hook(nullptr);
}

BOOST_AUTO_TEST_CASE(stop_is_idempotent_and_later_use_fails_typed) {
  PeerGroup group(2);
  group.connect(0, 1);
  group.at(1).stop();
  group.at(1).stop();
  BOOST_CHECK_THROW(group.at(1).receive(10ms), IoError);
  BOOST_CHECK_THROW(group.at(1).accept_from(0), IoError);
}
