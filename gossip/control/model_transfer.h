#pragma once
// Handing a state (the model, and the shared state beyond it: DiLoCo's x₀ and outer
// momentum) to a peer that needs it: a joiner, a peer that fell behind, one that must take
// over the common model of a round it missed, or one whose state lost the members'
// agreement (state_hashes.h). The state travels in the chunks of protocols/state_digest.h,
// each with its own digest (protocols/state_transfer.h has the messages):
//  - the taker asks one seeder for the chunk digests (state_request, answered by a
//    state_manifest) and checks them against the digest the members agreed for the state
//    (the root of the chunk digests); a seeder whose digests differ is caught;
//  - then it asks every seeder for chunks at once, at most kChunksInFlight each, a chunk at
//    a time to whichever has room, so the faster seeders serve more, and checks each chunk
//    as it arrives against its digest;
//  - a seeder whose chunk differs (or whose answer does not decode) is caught: counted in
//    the control plane's drops as wrong_state_served, named in Fetched::caught, added to
//    the caller's set of wrong seeders, and not asked again; its chunks go to the others.
//    A seeder that dies or moves on to a newer state is left out the same way, uncounted;
//  - without an agreed digest (a single seeder, whose state may change as it trains:
//    asynchronous gossip), the taker asks for the digests and every chunk in one request,
//    which the seeder answers from one moment's state, and checks the chunks against those
//    digests (that catches a transfer fault, not a lie).
// The seeder's side runs inside its control plane (control_plane.h), so a peer answers
// while it waits in any exchange.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gossip/transport/message.h"
#include "gossip/transport/transport.h"
#include "protocols/span.h"
#include "protocols/state_transfer.h"

namespace starling::gossip {

class ControlPlane;

/// Chunk requests a taker keeps open per seeder: 8 chunks of up to 1 MiB keep a link of
/// 100 ms round trip busy at 80 MB/s, and a seeder that lies costs at most 8 re-fetches.
inline constexpr std::size_t kChunksInFlight = 8;
/// How long a request may stay unanswered before it is asked again (of another seeder, when
/// there is one): a seeder's answers are rate-limited (control_plane.h).
inline constexpr std::chrono::milliseconds kRequestAgainAfter{1000};

/// Whom a state is taken from, and what it must be.
struct StateSource {
  std::vector<PeerId> seeders;        // asked for the digests in this order
  std::optional<std::uint64_t> root;  // the agreed state digest; nullopt: the first seeder's own
  std::set<PeerId>* wrong = nullptr;  // seeders caught before (skipped); those caught now are added
};

/// One seeder whose own chunk digests are trusted.
inline StateSource trusting(PeerId seeder) { return StateSource{{seeder}, std::nullopt, nullptr}; }

/// What a fetch got.
struct Fetched {
  std::uint64_t iteration = 0;              // of the state taken
  std::map<PeerId, std::size_t> chunks;     // chunks each seeder delivered that passed their check
  std::vector<std::string> caught;          // one line per seeder caught serving a wrong state
};

/// Takes the state of `source` into `model` and `shared` (whose lengths must be the
/// seeders'; an empty `shared` asks for the model alone). Messages of other kinds that arrive
/// meanwhile are put back for later. Throws WrongState when every seeder is caught or gone
/// and at least one was caught (the state is not taken: the caller must not train on it),
/// MembershipChanged when every seeder died or moved on, TimeoutError at the deadline.
Fetched fetch_state(Transport& transport, ControlPlane& control, const StateSource& source, protocols::Span<float> model,
                    Transport::Clock::time_point deadline, protocols::Span<float> shared = {});

/// A seeder's answer to `request` from `to`, out of the state it serves now (`model`, and
/// `shared` when the request asks for it) of `iteration`: the digests first when asked
/// for, then the chunks. `fault`, tests only, changes each chunk's values before they go
/// (a lying seeder: its digests stay honest). A range beyond the state is index_out_of_range.
protocols::Error answer_state_request(Transport& transport, PeerId to, const protocols::StateRequest& request,
                                      protocols::Span<const float> model, protocols::Span<const float> shared,
                                      std::uint64_t iteration, const std::function<void(std::vector<float>&)>& fault);

}  // namespace starling::gossip
