// The hello join handshake and the join reply message (gossip/control/join.h).
#include "gossip/control/join.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "gossip/control/invitation.h"
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

void write_text(protocols::ByteWriter& w, const std::string& text) {
  w.write<std::uint32_t>(static_cast<std::uint32_t>(text.size()));
  w.write_bytes(text.data(), text.size());
}

bool read_text(protocols::ByteReader& r, std::uint32_t limit, std::string& out) {
  const auto n = r.read<std::uint32_t>();
  if (!r.ok() || n > limit) return false;
  const protocols::ByteSpan bytes = r.take(n);
  if (!r.ok()) return false;
  out.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return true;
}

// The key=value lines of a description, in order.
std::vector<std::pair<std::string, std::string>> key_values(const std::string& description) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(description);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) out.emplace_back(line, std::string());
    else out.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  return out;
}

}  // namespace

std::vector<ViewEntry> live_view(Transport& transport, const Membership& membership, PeerId joiner,
                                 const protocols::Hello& ours) {
  std::vector<ViewEntry> view;
  view.push_back({transport.self(), ours.endpoint.empty() ? transport.endpoint() : ours.endpoint,
                  transport.public_key()});
  for (const auto& [peer, r] : membership.peers())
    if (peer != joiner && r.state == PeerState::alive && !r.endpoint.empty())
      view.push_back({peer, r.endpoint, r.public_key});
  return view;
}

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
  if (!transport.connected_to(request.from)) transport.connect(request.from, hello->endpoint, key.value_or(std::string()));
  JoinReply reply;
  reply.status = protocols::check_shape(*hello, ours) == Error::ok ? JoinStatus::accepted : JoinStatus::shape_mismatch;
  if (reply.status == JoinStatus::accepted) {
    reply.view = live_view(transport, membership, request.from, ours);
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

Error encode_bootstrap_request(const BootstrapRequest& q, std::vector<std::uint8_t>& payload) {
  if (q.invitation.size() > kMaxInvitation || q.description.size() > kMaxDescription ||
      q.endpoint.size() > protocols::kMaxEndpoint || q.endpoint.empty() || !printable(q.endpoint))
    return Error::invalid_option;
  payload.clear();
  protocols::ByteWriter w(payload);
  write_text(w, q.invitation);
  write_text(w, q.description);
  write_text(w, q.endpoint);
  return Error::ok;
}

protocols::Result<BootstrapRequest> decode_bootstrap_request(protocols::ByteSpan payload) {
  protocols::ByteReader r(payload);
  BootstrapRequest q;
  if (!read_text(r, kMaxInvitation, q.invitation) || !read_text(r, kMaxDescription, q.description) ||
      !read_text(r, protocols::kMaxEndpoint, q.endpoint))
    return Error::truncated;
  if (r.remaining() != 0) return Error::oversized;
  if (q.endpoint.empty() || !printable(q.endpoint)) return Error::bad_encoding;
  return q;
}

Error encode_bootstrap_reply(const BootstrapReply& reply, std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> view;
  if (reply.reason.size() > kMaxInvitation) return Error::invalid_option;
  if (const Error e = encode_join_reply(JoinReply{JoinStatus::accepted, reply.view}, view); e != Error::ok) return e;
  payload.clear();
  protocols::ByteWriter w(payload);
  w.write<std::uint8_t>(static_cast<std::uint8_t>(reply.status));
  w.write_bytes("\0\0\0", 3);
  w.write<std::uint32_t>(reply.id);
  write_text(w, reply.reason);
  w.write_bytes(view.data(), view.size());
  return Error::ok;
}

protocols::Result<BootstrapReply> decode_bootstrap_reply(protocols::ByteSpan payload) {
  protocols::ByteReader r(payload);
  BootstrapReply reply;
  const auto status = r.read<std::uint8_t>();
  const protocols::ByteSpan reserved = r.take(3);
  reply.id = r.read<std::uint32_t>();
  if (!r.ok() || !read_text(r, kMaxInvitation, reply.reason)) return Error::truncated;
  if (status > static_cast<std::uint8_t>(BootstrapStatus::redirect)) return Error::bad_parameter;
  if (reserved[0] || reserved[1] || reserved[2]) return Error::bad_header;
  reply.status = static_cast<BootstrapStatus>(status);
  protocols::Result<JoinReply> view = decode_join_reply(r.take(r.remaining()));
  if (!view) return view.error();
  reply.view = std::move(view->view);
  return reply;
}

std::string description_difference(const std::string& ours, const std::string& theirs) {
  const auto a = key_values(ours), b = key_values(theirs);
  std::map<std::string, std::string> other(b.begin(), b.end());
  for (const auto& [key, value] : a) {
    const auto it = other.find(key);
    if (it == other.end()) return key + ": " + value + " here, missing from the joiner's config";
    if (it->second != value) return key + ": " + value + " here, " + it->second + " in the joiner's config";
  }
  for (const auto& [key, value] : b)
    if (!std::count_if(a.begin(), a.end(), [&](const auto& kv) { return kv.first == key; }))
      return key + ": unknown here, " + value + " in the joiner's config";
  return {};
}

std::string bootstrap_refusal(const BootstrapRequest& request, const SwarmAdmission& admission) {
  if (const std::string diff = description_difference(admission.description, request.description); !diff.empty())
    return "the joiner's job differs from this swarm's at " + diff;
  return check_invitation(request.invitation, admission.owner_key, admission.job_id, unix_now());
}

void send_bootstrap_reply(Transport& transport, PeerId newcomer, const std::string& endpoint, const std::string& key,
                          const BootstrapReply& reply) {
  std::vector<std::uint8_t> payload;
  if (encode_bootstrap_reply(reply, payload) != Error::ok)
    STARLING_GOSSIP_THROW(InvalidArgument, "join: the answer does not fit a bootstrap reply");
  if (!transport.connected_to(newcomer)) transport.connect(newcomer, endpoint, key);
  transport.send(newcomer, hello_header(kBootstrapReplyRound), payload);
}

BootstrapReply bootstrap(Transport& transport, const std::string& endpoint, const std::string& key,
                         const BootstrapRequest& request, Transport::Clock::time_point deadline) {
  // A route of its own per seed asked: a seed's id is not known before it answers.
  PeerId route = kProvisionalIds - 1;
  while (transport.connected_to(route)) --route;
  std::vector<std::uint8_t> payload;
  if (encode_bootstrap_request(request, payload) != Error::ok)
    STARLING_GOSSIP_THROW(InvalidArgument, "join: the request breaks the bootstrap format's limits");
  transport.connect(route, endpoint, key);
  transport.send(route, hello_header(kBootstrapRound), payload);
  for (;;) {
    Message m = transport.receive(deadline);
    if (m.header.type != protocols::MessageType::hello || m.header.round != kBootstrapReplyRound) continue;
    protocols::Result<BootstrapReply> reply = decode_bootstrap_reply(m.bytes());
    if (reply) return std::move(*reply);
  }
}

void request_swarm_join(Transport& transport, PeerId to, const std::string& invitation, const protocols::Hello& ours) {
  std::vector<std::uint8_t> hello;
  if (invitation.size() > kMaxInvitation || protocols::encode_hello(ours, hello) != Error::ok)
    STARLING_GOSSIP_THROW(InvalidArgument, "join: the invitation or hello breaks the format's limits");
  std::vector<std::uint8_t> payload;
  protocols::ByteWriter w(payload);
  write_text(w, invitation);
  w.write_bytes(hello.data(), hello.size());
  transport.send(to, hello_header(kSwarmJoinRound), payload);
}

protocols::Result<SwarmJoin> decode_swarm_join(protocols::ByteSpan payload) {
  protocols::ByteReader r(payload);
  SwarmJoin j;
  if (!read_text(r, kMaxInvitation, j.invitation)) return Error::truncated;
  protocols::Result<protocols::Hello> hello = protocols::decode_hello(r.take(r.remaining()));
  if (!hello) return hello.error();
  j.hello = std::move(*hello);
  return j;
}

}  // namespace starling::gossip
