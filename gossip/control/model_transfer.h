#pragma once
// Handing a whole model to a peer that needs it: a joiner, a peer that fell behind, one that
// must take over the common model of a round it missed, or one whose state lost the
// members' agreement (state_hashes.h). The taker sends gossip_pull (empty payload); the
// giver answers with the model as state_transfer chunks of the parameters section
// (protocols/state_transfer.h), each chunk's header round carrying the iteration the model
// belongs to. A pull whose header round is kPullSharedState asks for the state beyond the
// model that the members share as well (DiLoCo's x₀ and outer momentum), which follows as
// the optimizer section. The giver's side runs inside its control plane (control_plane.h),
// so a peer answers while it waits in any exchange.
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
/// The header round of a gossip_pull that asks for the shared state with the model.
inline constexpr std::uint64_t kPullSharedState = 1;

/// Sends `model` to `to` in chunks, each tagged with `iteration`, then `shared` (the
/// optimizer section) unless it is empty.
void send_model(Transport& transport, PeerId to, protocols::Span<const float> model, std::uint64_t iteration,
                protocols::Span<const float> shared = {});

/// Asks `source` for its model (and, when `shared` is not empty, its shared state) and
/// waits until every chunk of one iteration has arrived in `into` and `shared` (whose
/// lengths must be the source's); returns that iteration. Other messages that arrive
/// meanwhile are put back for later. The request is repeated every second;
/// MembershipChanged when the source dies, TimeoutError at the deadline.
std::uint64_t fetch_model(Transport& transport, ControlPlane& control, PeerId source, protocols::Span<float> into,
                          Transport::Clock::time_point deadline, protocols::Span<float> shared = {});

}  // namespace starling::gossip
