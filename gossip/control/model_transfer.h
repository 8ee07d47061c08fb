#pragma once
// Handing a whole model to a peer that needs it: a joiner, a peer that fell behind, or one
// that must take over the common model of a round it missed. The taker sends gossip_pull
// (empty payload); the giver answers with the model as state_transfer chunks of the
// parameters section (protocols/state_transfer.h), each chunk's header round carrying the
// iteration the model belongs to. The giver's side runs inside its control plane
// (control_plane.h), so a peer answers while it waits in any exchange.
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"
#include "protocols/span.h"

namespace starling::gossip {

class ControlPlane;

/// Floats per state_transfer chunk: 1 MiB, the algorithms' segment size.
inline constexpr std::size_t kModelChunkFloats = std::size_t{1} << 18;

/// Sends `model` to `to` in chunks, each tagged with `iteration`.
void send_model(Transport& transport, PeerId to, protocols::Span<const float> model, std::uint64_t iteration);

/// Asks `source` for its model and waits until every chunk of one iteration has arrived in
/// `into` (whose length must be the source's); returns that iteration. Other messages that
/// arrive meanwhile are put back for later. The request is repeated every second;
/// MembershipChanged when the source dies, TimeoutError at the deadline.
std::uint64_t fetch_model(Transport& transport, ControlPlane& control, PeerId source, protocols::Span<float> into,
                          Transport::Clock::time_point deadline);

}  // namespace starling::gossip
