// The relay envelope's encoding (gossip/transport/zmq/relay_envelope.h).
#include "gossip/transport/zmq/relay_envelope.h"

#include <cstdint>
#include <cstring>

#include "protocols/byte_io.h"

namespace starling::gossip {

namespace {
constexpr std::size_t kSize = 8;
constexpr char kMagic[3] = {'S', 'R', 'L'};
}  // namespace

zmq::message_t encode_relay_envelope(RelayEnvelope envelope) {
  zmq::message_t m(kSize);
  auto* p = static_cast<std::uint8_t*>(m.data());
  std::memcpy(p, kMagic, sizeof kMagic);
  p[3] = static_cast<std::uint8_t>(envelope.direction);
  protocols::store_le<std::uint32_t>(p + 4, envelope.peer);
  return m;
}

std::optional<RelayEnvelope> decode_relay_envelope(const zmq::message_t& frame) {
  if (frame.size() != kSize) return std::nullopt;
  const auto* p = static_cast<const std::uint8_t*>(frame.data());
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) return std::nullopt;
  const auto direction = static_cast<RelayEnvelope::Direction>(p[3]);
  if (direction != RelayEnvelope::Direction::to && direction != RelayEnvelope::Direction::hello_to &&
      direction != RelayEnvelope::Direction::from)
    return std::nullopt;
  return RelayEnvelope{direction, protocols::load_le<std::uint32_t>(p + 4)};
}

}  // namespace starling::gossip
