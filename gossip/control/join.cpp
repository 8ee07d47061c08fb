// The hello join handshake and the join reply message (gossip/control/join.h).
#include "gossip/control/join.h"

#include "gossip/transport/curve.h"
#include "gossip/transport/error.h"
#include "protocols/byte_io.h"

namespace starling::gossip {

namespace {

using protocols::Error;

bool printable(const std::string& s) {
  for (char c : s)
    if (c < 0x21 || c > 0x7E) return false;
  return true;
}

bool entry_fits(const ViewEntry& e) {
  return e.endpoint.size() <= protocols::kMaxEndpoint && printable(e.endpoint) &&
         (e.public_key.empty() || is_z85_key(e.public_key));
}

protocols::Result<ViewEntry> read_entry(protocols::ByteReader& r) {
  ViewEntry e;
  e.peer = r.read<std::uint32_t>();
  const auto endpoint = r.read<std::uint16_t>();
  const auto key = r.read<std::uint16_t>();
  if (!r.ok()) return Error::truncated;
  if (endpoint > protocols::kMaxEndpoint || (key != 0 && key != kZ85KeyLength)) return Error::bad_parameter;
  const protocols::ByteSpan text = r.take(endpoint);
  const protocols::ByteSpan z85 = r.take(key);
  if (!r.ok()) return Error::truncated;
  e.endpoint.assign(reinterpret_cast<const char*>(text.data()), text.size());
  e.public_key.assign(reinterpret_cast<const char*>(z85.data()), z85.size());
  if (!entry_fits(e)) return Error::bad_encoding;
  return e;
}

protocols::FrameHeader hello_header(std::uint64_t round) {
  protocols::FrameHeader h;
  h.type = protocols::MessageType::hello;
  h.round = round;
  return h;
}

// Itself first, then every live peer it can describe, leaving out the joiner.
std::vector<ViewEntry> view_of(Transport& transport, const Membership& membership, PeerId joiner,
                               const protocols::Hello& ours) {
  std::vector<ViewEntry> view;
  view.push_back({transport.self(), ours.endpoint.empty() ? transport.endpoint() : ours.endpoint,
                  transport.public_key()});
  for (const auto& [peer, r] : membership.peers())
    if (peer != joiner && r.state == PeerState::alive && !r.endpoint.empty())
      view.push_back({peer, r.endpoint, r.public_key});
  return view;
}

}  // namespace

Error encode_join_reply(const JoinReply& reply, std::vector<std::uint8_t>& payload) {
  if (reply.view.size() > kMaxViewEntries) return Error::invalid_option;
  for (const ViewEntry& e : reply.view)
    if (!entry_fits(e)) return Error::invalid_option;
  payload.clear();
  protocols::ByteWriter w(payload);
  w.write<std::uint8_t>(static_cast<std::uint8_t>(reply.status));
  w.write_bytes("\0\0\0", 3);
  w.write<std::uint32_t>(static_cast<std::uint32_t>(reply.view.size()));
  for (const ViewEntry& e : reply.view) {
    w.write<std::uint32_t>(e.peer);
    w.write<std::uint16_t>(static_cast<std::uint16_t>(e.endpoint.size()));
    w.write<std::uint16_t>(static_cast<std::uint16_t>(e.public_key.size()));
    w.write_bytes(e.endpoint.data(), e.endpoint.size());
    w.write_bytes(e.public_key.data(), e.public_key.size());
  }
  return Error::ok;
}

protocols::Result<JoinReply> decode_join_reply(protocols::ByteSpan payload) {
  protocols::ByteReader r(payload);
  const auto status = r.read<std::uint8_t>();
  const protocols::ByteSpan reserved = r.take(3);
  const auto count = r.read<std::uint32_t>();
  if (!r.ok()) return Error::truncated;
  if (status > static_cast<std::uint8_t>(JoinStatus::shape_mismatch) || count > kMaxViewEntries) return Error::bad_parameter;
  if (reserved[0] || reserved[1] || reserved[2]) return Error::bad_header;
  JoinReply reply;
  reply.status = static_cast<JoinStatus>(status);
  for (std::uint32_t i = 0; i < count; ++i) {
    protocols::Result<ViewEntry> e = read_entry(r);
    if (!e) return e.error();
    reply.view.push_back(std::move(*e));
  }
  if (r.remaining() != 0) return Error::oversized;
  return reply;
}

bool is_join_reply(const protocols::FrameHeader& h) {
  return h.type == protocols::MessageType::hello && h.round == kJoinReplyRound;
}

bool is_join_request(const protocols::FrameHeader& h) {
  return h.type == protocols::MessageType::hello && h.round == 0;
}

void request_join(Transport& transport, PeerId seed, const protocols::Hello& ours) {
  std::vector<std::uint8_t> payload;
  if (protocols::encode_hello(ours, payload) != Error::ok)
    STARLING_GOSSIP_THROW(InvalidArgument, "join: hello breaks the format's limits or its sizes do not add up");
  transport.send(seed, hello_header(0), payload);
}

JoinStatus answer_join(Transport& transport, Membership& membership, const Message& request,
                       const protocols::Hello& ours) {
  if (!is_join_request(request.header)) STARLING_GOSSIP_THROW(InvalidArgument, "join: not a join request");
  protocols::Result<protocols::Hello> hello = protocols::decode_hello(request.bytes());
  if (!hello || hello->endpoint.empty())
    STARLING_GOSSIP_THROW(InvalidArgument, "join: undecodable hello from peer " + std::to_string(request.from));
  const std::optional<std::string> key = peer_public_key(request);
  if (transport.secure() && !key)
    STARLING_GOSSIP_THROW(InvalidArgument, "join: hello from peer " + std::to_string(request.from) + " not over CURVE");
  if (!transport.connected_to(request.from)) {
    if (key) transport.connect(request.from, hello->endpoint, *key);
    else transport.connect(request.from, hello->endpoint);
  }
  JoinReply reply;
  reply.status = protocols::check_shape(*hello, ours) == Error::ok ? JoinStatus::accepted : JoinStatus::shape_mismatch;
  if (reply.status == JoinStatus::accepted) {
    reply.view = view_of(transport, membership, request.from, ours);
    membership.track(request.from, Membership::Clock::now(), hello->endpoint, key.value_or(std::string()));
  } else {
    membership.forget(request.from);  // observe() counted its hello as a sign of life
  }
  std::vector<std::uint8_t> payload;
  if (encode_join_reply(reply, payload) != Error::ok)
    STARLING_GOSSIP_THROW(InvalidArgument, "join: the view does not fit a join reply");
  transport.send(request.from, hello_header(kJoinReplyRound), payload);
  return reply.status;
}

JoinReply await_join_reply(Transport& transport, Membership& membership, PeerId seed,
                           Membership::Clock::time_point deadline) {
  for (;;) {
    Message m = receive_data(transport, membership, deadline);
    if (m.from != seed || !is_join_reply(m.header)) continue;
    protocols::Result<JoinReply> reply = decode_join_reply(m.bytes());
    if (!reply) continue;  // a garbled reply is as good as none; the deadline decides
    std::string endpoint, key;
    for (const ViewEntry& e : reply->view)
      if (e.peer == seed) endpoint = e.endpoint, key = e.public_key;
    membership.track(seed, Membership::Clock::now(), endpoint, key);
    return std::move(*reply);
  }
}

}  // namespace starling::gossip
