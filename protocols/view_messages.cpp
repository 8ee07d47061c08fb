// View agreement payloads (protocols/view_messages.h).
#include "protocols/view_messages.h"

#include "protocols/byte_io.h"

namespace starling::protocols {
namespace {

constexpr std::size_t kFixedPart = 40;

bool strictly_increasing(const std::vector<std::uint32_t>& ids) {
  for (std::size_t i = 1; i < ids.size(); ++i)
    if (ids[i] <= ids[i - 1]) return false;
  return true;
}

// The rules a message must keep, whichever side checks them.
Error check(const ViewMessage& m) {
  if (m.kind < ViewKind::status || m.kind > ViewKind::decide) return Error::bad_parameter;
  if (m.kind != ViewKind::status && m.flags != 0) return Error::bad_header;
  if (m.flags & ~(kViewFinished | kViewJoining)) return Error::bad_header;
  if (m.kind == ViewKind::prepare && !m.peers.empty()) return Error::bad_parameter;
  if (m.kind != ViewKind::decide && m.source != 0) return Error::bad_parameter;
  if (m.peers.size() > kMaxViewPeers) return Error::bad_parameter;
  if (!strictly_increasing(m.peers)) return Error::bad_index_order;
  return Error::ok;
}

}  // namespace

Error encode_view(const ViewMessage& m, std::vector<std::uint8_t>& payload) {
  if (check(m) != Error::ok) return Error::invalid_option;
  payload.clear();
  ByteWriter w(payload);
  w.write<std::uint8_t>(static_cast<std::uint8_t>(m.kind));
  w.write<std::uint8_t>(m.flags);
  w.write<std::uint16_t>(0);
  w.write<std::uint32_t>(static_cast<std::uint32_t>(m.peers.size()));
  w.write<std::uint64_t>(m.view);
  w.write<std::uint64_t>(m.round);
  w.write<std::uint64_t>(m.iteration);
  w.write<std::uint32_t>(m.source);
  w.write<std::uint32_t>(0);
  for (std::uint32_t id : m.peers) w.write<std::uint32_t>(id);
  return Error::ok;
}

Result<ViewMessage> decode_view(ByteSpan payload) {
  if (payload.size() < kFixedPart) return Error::truncated;
  ByteReader r(payload);
  ViewMessage m;
  m.kind = static_cast<ViewKind>(r.read<std::uint8_t>());
  m.flags = r.read<std::uint8_t>();
  const auto reserved16 = r.read<std::uint16_t>();
  const auto count = r.read<std::uint32_t>();
  m.view = r.read<std::uint64_t>();
  m.round = r.read<std::uint64_t>();
  m.iteration = r.read<std::uint64_t>();
  m.source = r.read<std::uint32_t>();
  const auto reserved32 = r.read<std::uint32_t>();
  if (reserved16 != 0 || reserved32 != 0) return Error::bad_header;
  if (count > kMaxViewPeers) return Error::bad_parameter;
  if (r.remaining() < 4ull * count) return Error::truncated;
  if (r.remaining() > 4ull * count) return Error::oversized;
  m.peers.resize(count);
  for (std::uint32_t& id : m.peers) id = r.read<std::uint32_t>();
  if (Error e = check(m); e != Error::ok) return e;
  return m;
}

}  // namespace starling::protocols
