// Membership payloads: hello, heartbeat, leave (protocols/membership_messages.h).
#include "protocols/membership_messages.h"

#include <algorithm>

#include "protocols/byte_io.h"

namespace starling::protocols {
namespace {

bool printable(const std::string& s) {
  for (char c : s)
    if (c < 0x21 || c > 0x7E) return false;
  return true;
}

// Sum of the tensor sizes, or false if it overflows or differs from the total.
bool sizes_add_up(const std::vector<std::uint64_t>& sizes, std::uint64_t total) {
  std::uint64_t sum = 0;
  for (std::uint64_t s : sizes) {
    if (sum + s < sum) return false;
    sum += s;
  }
  return sum == total;
}

}  // namespace

Error encode_hello(const Hello& hello, std::vector<std::uint8_t>& payload) {
  if (hello.tensor_sizes.empty() || hello.tensor_sizes.size() > kMaxTensors ||
      hello.endpoint.size() > kMaxEndpoint || !printable(hello.endpoint) ||
      !sizes_add_up(hello.tensor_sizes, hello.parameter_count))
    return Error::invalid_option;
  payload.clear();
  ByteWriter w(payload);
  w.write<std::uint64_t>(hello.parameter_count);
  w.write<std::uint32_t>(static_cast<std::uint32_t>(hello.tensor_sizes.size()));
  w.write<std::uint16_t>(static_cast<std::uint16_t>(hello.endpoint.size()));
  w.write<std::uint16_t>(0);
  for (std::uint64_t s : hello.tensor_sizes) w.write<std::uint64_t>(s);
  w.write_bytes(hello.endpoint.data(), hello.endpoint.size());
  return Error::ok;
}

Result<Hello> decode_hello(ByteSpan payload) {
  ByteReader r(payload);
  Hello hello;
  hello.parameter_count = r.read<std::uint64_t>();
  const std::uint32_t tensors = r.read<std::uint32_t>();
  const std::uint16_t endpoint = r.read<std::uint16_t>();
  const std::uint16_t reserved = r.read<std::uint16_t>();
  if (!r.ok()) return Error::truncated;
  if (reserved != 0 || tensors == 0 || tensors > kMaxTensors || endpoint > kMaxEndpoint) return Error::bad_parameter;
  const std::size_t need = 8ull * tensors + endpoint;
  if (r.remaining() < need) return Error::truncated;
  if (r.remaining() > need) return Error::oversized;
  hello.tensor_sizes.resize(tensors);
  for (std::uint64_t& s : hello.tensor_sizes) s = r.read<std::uint64_t>();
  ByteSpan text = r.take(endpoint);
  hello.endpoint.assign(reinterpret_cast<const char*>(text.data()), text.size());
  if (!printable(hello.endpoint)) return Error::bad_encoding;
  if (!sizes_add_up(hello.tensor_sizes, hello.parameter_count)) return Error::bad_parameter;
  return hello;
}

Error check_shape(const Hello& peer, const Hello& ours) {
  return peer.parameter_count == ours.parameter_count && peer.tensor_sizes == ours.tensor_sizes
             ? Error::ok
             : Error::shape_mismatch;
}

void encode_heartbeat(const Heartbeat& heartbeat, std::vector<std::uint8_t>& payload) {
  payload.clear();
  ByteWriter w(payload);
  w.write<std::uint64_t>(heartbeat.clock_ns);
  w.write<std::uint64_t>(heartbeat.last_round);
  if (heartbeat.notices.empty()) return;
  const std::size_t count = std::min<std::size_t>(heartbeat.notices.size(), kMaxNotices);
  w.write<std::uint32_t>(static_cast<std::uint32_t>(count));
  for (std::size_t i = 0; i < count; ++i) {
    const DeathNotice& n = heartbeat.notices[i];
    w.write<std::uint32_t>(n.peer);
    w.write<std::uint8_t>(static_cast<std::uint8_t>(n.kind));
    w.write<std::uint64_t>(n.round);
    w.write<std::uint64_t>(n.iteration);
  }
}

Result<Heartbeat> decode_heartbeat(ByteSpan payload) {
  constexpr std::size_t kNoticeBytes = 21;
  if (payload.size() < 16) return Error::truncated;
  ByteReader r(payload);
  Heartbeat h;
  h.clock_ns = r.read<std::uint64_t>();
  h.last_round = r.read<std::uint64_t>();
  if (payload.size() == 16) return h;
  if (payload.size() < 20) return Error::truncated;
  const std::uint32_t count = r.read<std::uint32_t>();
  if (count == 0 || count > kMaxNotices) return Error::bad_parameter;
  if (r.remaining() < count * kNoticeBytes) return Error::truncated;
  if (r.remaining() > count * kNoticeBytes) return Error::oversized;
  for (std::uint32_t i = 0; i < count; ++i) {
    DeathNotice n;
    n.peer = r.read<std::uint32_t>();
    const std::uint8_t kind = r.read<std::uint8_t>();
    if (kind > static_cast<std::uint8_t>(NoticeKind::vouch)) return Error::bad_parameter;
    n.kind = static_cast<NoticeKind>(kind);
    n.round = r.read<std::uint64_t>();
    n.iteration = r.read<std::uint64_t>();
    h.notices.push_back(n);
  }
  return h;
}

void encode_leave(LeaveReason reason, std::vector<std::uint8_t>& payload) {
  payload.clear();
  ByteWriter(payload).write<std::uint32_t>(static_cast<std::uint32_t>(reason));
}

Result<LeaveReason> decode_leave(ByteSpan payload) {
  if (payload.size() < 4) return Error::truncated;
  if (payload.size() > 4) return Error::oversized;
  const std::uint32_t reason = load_le<std::uint32_t>(payload.data());
  if (reason > static_cast<std::uint32_t>(LeaveReason::evicted)) return Error::bad_parameter;
  return static_cast<LeaveReason>(reason);
}

}  // namespace starling::protocols
