// Model hand-over between peers (gossip/control/model_transfer.h).
#include "gossip/control/model_transfer.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gossip/control/control_plane.h"
#include "gossip/transport/error.h"
#include "gossip/transport/ring_common.h"
#include "protocols/byte_io.h"
#include "protocols/state_transfer.h"

namespace starling::gossip {

using Clock = Transport::Clock;

namespace {

void send_section(Transport& transport, PeerId to, protocols::StateSection section, protocols::Span<const float> values,
                  std::uint64_t iteration) {
  std::vector<std::uint8_t> header, payload;
  for (std::size_t begin = 0; begin < std::max<std::size_t>(values.size(), 1); begin += kModelChunkFloats) {
    protocols::StateChunk chunk;
    chunk.sender = transport.self();
    chunk.round = iteration;
    chunk.section = section;
    chunk.offset = begin;
    chunk.length = std::min(kModelChunkFloats, values.size() - begin);
    chunk.last = begin + chunk.length >= values.size();
    if (protocols::encode_state_chunk(chunk, values, header, payload) != protocols::Error::ok) return;
    protocols::Result<protocols::FrameHeader> h = protocols::decode_header({header.data(), header.size()});
    transport.send(to, *h, protocols::ByteSpan(payload.data(), payload.size()));
  }
}

void request(Transport& transport, PeerId source, bool shared) {
  protocols::FrameHeader pull;
  pull.type = protocols::MessageType::gossip_pull;
  pull.round = shared ? kPullSharedState : 0;
  transport.send(source, pull, protocols::ByteSpan());
}

// The chunks of one section that arrived.
struct Arrived {
  std::set<std::uint64_t> offsets;
  std::size_t have = 0;
  void clear() { offsets.clear(), have = 0; }
  bool complete(std::size_t length) const { return have >= length && !offsets.empty(); }
};

}  // namespace

void send_model(Transport& transport, PeerId to, protocols::Span<const float> model, std::uint64_t iteration,
                protocols::Span<const float> shared) {
  send_section(transport, to, protocols::StateSection::parameters, model, iteration);
  if (!shared.empty()) send_section(transport, to, protocols::StateSection::optimizer, shared, iteration);
}

std::uint64_t fetch_model(Transport& transport, ControlPlane& control, PeerId source, protocols::Span<float> into,
                          Clock::time_point deadline, protocols::Span<float> shared) {
  const bool with_shared = !shared.empty();
  Arrived model, extra;  // of `iteration`
  bool any = false;
  std::uint64_t iteration = 0;
  std::vector<Message> aside;
  request(transport, source, with_shared);
  auto again = Clock::now() + std::chrono::seconds(1);
  while (!model.complete(into.size()) || (with_shared && !extra.complete(shared.size()))) {
    if (!control.alive(source))
      STARLING_GOSSIP_THROW(MembershipChanged, "peer " + std::to_string(source) + ", the model's source, died");
    const auto now = Clock::now();
    if (now >= deadline)
      STARLING_GOSSIP_THROW(TimeoutError, "no model from peer " + std::to_string(source) + " before the deadline");
    if (now >= again) request(transport, source, with_shared), again = now + std::chrono::seconds(1);
    std::optional<Message> m = transport.try_receive(std::min(deadline, now + std::chrono::milliseconds(50)));
    if (!m) continue;
    if (m->header.type != protocols::MessageType::state_transfer || m->from != source) {
      if (aside.size() < kMaxEarlyMessages) aside.push_back(std::move(*m));
      else control.count("set_aside_overflow");
      continue;
    }
    if (any && m->header.round < iteration) continue;  // an older answer: the newer one wins
    // The section decides where the chunk goes (its payload starts with it).
    const bool optimizer = m->bytes().size() >= 4 &&
                           protocols::load_le<std::uint32_t>(m->bytes().data()) ==
                               static_cast<std::uint32_t>(protocols::StateSection::optimizer);
    if (optimizer && !with_shared) continue;  // not asked for
    protocols::Result<protocols::StateChunk> chunk =
        protocols::decode_state_chunk(m->header, m->bytes(), optimizer ? shared : into);
    if (!chunk) {
      control.count(std::string(protocols::to_string(chunk.error())));
      continue;
    }
    if (!any || chunk->round != iteration) model.clear(), extra.clear(), iteration = chunk->round, any = true;
    Arrived& section = optimizer ? extra : model;
    if (section.offsets.insert(chunk->offset).second) section.have += chunk->length;
  }
  transport.put_back(std::move(aside));
  return iteration;
}

}  // namespace starling::gossip
