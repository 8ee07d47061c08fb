// Model hand-over between peers (gossip/control/model_transfer.h).
#include "gossip/control/model_transfer.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gossip/control/control_plane.h"
#include "gossip/transport/error.h"
#include "gossip/transport/ring_common.h"
#include "protocols/state_transfer.h"

namespace starling::gossip {

using Clock = Transport::Clock;

void send_model(Transport& transport, PeerId to, protocols::Span<const float> model, std::uint64_t iteration) {
  std::vector<std::uint8_t> header, payload;
  for (std::size_t begin = 0; begin < std::max<std::size_t>(model.size(), 1); begin += kModelChunkFloats) {
    protocols::StateChunk chunk;
    chunk.sender = transport.self();
    chunk.round = iteration;
    chunk.section = protocols::StateSection::parameters;
    chunk.offset = begin;
    chunk.length = std::min(kModelChunkFloats, model.size() - begin);
    chunk.last = begin + chunk.length >= model.size();
    if (protocols::encode_state_chunk(chunk, model, header, payload) != protocols::Error::ok) return;
    protocols::Result<protocols::FrameHeader> h = protocols::decode_header({header.data(), header.size()});
    transport.send(to, *h, protocols::ByteSpan(payload.data(), payload.size()));
  }
}

namespace {

void request(Transport& transport, PeerId source) {
  protocols::FrameHeader pull;
  pull.type = protocols::MessageType::gossip_pull;
  transport.send(source, pull, protocols::ByteSpan());
}

}  // namespace

std::uint64_t fetch_model(Transport& transport, ControlPlane& control, PeerId source, protocols::Span<float> into,
                          Clock::time_point deadline) {
  std::set<std::uint64_t> offsets;  // chunks of `iteration` that arrived
  std::size_t have = 0;
  std::uint64_t iteration = 0;
  std::vector<Message> aside;
  request(transport, source);
  auto again = Clock::now() + std::chrono::seconds(1);
  while (have < into.size() || offsets.empty()) {
    if (!control.alive(source))
      STARLING_GOSSIP_THROW(MembershipChanged, "peer " + std::to_string(source) + ", the model's source, died");
    const auto now = Clock::now();
    if (now >= deadline)
      STARLING_GOSSIP_THROW(TimeoutError, "no model from peer " + std::to_string(source) + " before the deadline");
    if (now >= again) request(transport, source), again = now + std::chrono::seconds(1);
    std::optional<Message> m = transport.try_receive(std::min(deadline, now + std::chrono::milliseconds(50)));
    if (!m) continue;
    if (m->header.type != protocols::MessageType::state_transfer || m->from != source) {
      if (aside.size() < kMaxEarlyMessages) aside.push_back(std::move(*m));
      else control.count("set_aside_overflow");
      continue;
    }
    if (!offsets.empty() && m->header.round < iteration) continue;  // an older answer: the newer one wins
    protocols::Result<protocols::StateChunk> chunk = protocols::decode_state_chunk(m->header, m->bytes(), into);
    if (!chunk) {
      control.count(std::string(protocols::to_string(chunk.error())));
      continue;
    }
    if (offsets.empty() || chunk->round != iteration) offsets.clear(), have = 0, iteration = chunk->round;
    if (offsets.insert(chunk->offset).second) have += chunk->length;
  }
  transport.put_back(std::move(aside));
  return iteration;
}

}  // namespace starling::gossip
