// The ZeroMQ transport on 127.0.0.1: delivery, per-peer byte counts, deadlines, typed
// errors, and garbage frames dropped and counted by reason without harming the peer.
#define BOOST_TEST_MODULE gossip_transport
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gossip/error.h"
#include "gossip/send_fence.h"
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
  BOOST_TEST(group.at(0).stats().peers.at(1).bytes_sent == 10 * (kHeaderSize + payload.size()));
}

// Zero-copy sends: the bytes arrive as they were, and the fence opens only once ZeroMQ has
// let go of every lent message.
BOOST_AUTO_TEST_CASE(lent_payloads_are_sent_without_a_copy_and_fenced) {
  PeerGroup group(2);
  group.connect(0, 1);
  std::vector<std::uint8_t> payload(1 << 20);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 31);
  SendFence fence;
  for (int i = 0; i < 4; ++i)
    group.at(0).send(1, push_header(i, payload.size() / 4), fence.lend(payload.data(), payload.size()));
  fence.wait(std::chrono::steady_clock::now() + 5s);
  BOOST_TEST(fence.pending() == 0u);
  for (int i = 0; i < 4; ++i) {
    const Message m = group.at(1).receive(5s);
    BOOST_TEST(std::equal(payload.begin(), payload.end(), m.bytes().data()));
  }
  BOOST_TEST(group.at(1).stats().dropped() == 0u);
  // A message still held keeps the fence shut until its deadline; released, it opens.
  auto held = std::make_unique<zmq::message_t>(fence.lend(payload.data(), 16));
  BOOST_CHECK_THROW(fence.wait(std::chrono::steady_clock::now() + 20ms), TimeoutError);
  held.reset();
  fence.wait(std::chrono::steady_clock::now() + 1s);
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
  zmq::context_t context;
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

BOOST_AUTO_TEST_CASE(stop_is_idempotent_and_later_use_fails_typed) {
  PeerGroup group(2);
  group.connect(0, 1);
  group.at(1).stop();
  group.at(1).stop();
  BOOST_CHECK_THROW(group.at(1).receive(10ms), IoError);
  BOOST_CHECK_THROW(group.at(1).accept_from(0), IoError);
}
