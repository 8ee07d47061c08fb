#pragma once
// The view family: how the live peers of a synchronous job agree on who is in the job and
// where it goes on (gossip/control/view_agreement.h has the protocol). One payload, three kinds:
//   status   member → leader: where the sender stands (its view, the round it is working
//            on, the iteration its last common model belongs to) and whom it hears;
//   prepare  leader → member: a view change has begun, send your status;
//   decide   leader → every peer it hears: the new view, the round it starts at, and the
//            peer whose common model laggers and joiners take over, with its iteration.
// The header carries no tensor: codec, tensor offset and length, flags and round are zero.
//
//  view payload (little-endian):
//  +--------+------+-------------------------------------------------------------+
//  | offset | size | field                                                       |
//  +--------+------+-------------------------------------------------------------+
//  |      0 |    1 | kind (ViewKind)                                             |
//  |      1 |    1 | flags (status only: kViewFinished, kViewJoining)            |
//  |      2 |    2 | reserved, zero                                              |
//  |      4 |    4 | peer count N (0..kMaxViewPeers; zero for prepare)           |
//  |      8 |    8 | view number                                                 |
//  |     16 |    8 | round (status: the one it works on; decide: the first one)  |
//  |     24 |    8 | iteration (of the sender's / the source's common model)     |
//  |     32 |    4 | source peer id (decide; zero otherwise)                     |
//  |     36 |    4 | reserved, zero                                              |
//  |     40 |  4·N | peer ids, strictly increasing (status: heard; decide: the   |
//  |        |      | members of the new view)                                    |
//  +--------+------+-------------------------------------------------------------+
#include <cstdint>
#include <vector>

#include "protocols/error.h"
#include "protocols/span.h"

namespace starling::protocols {

inline constexpr std::uint32_t kMaxViewPeers = 4096;

enum class ViewKind : std::uint8_t { status = 1, prepare = 2, decide = 3 };

enum ViewFlags : std::uint8_t {
  kViewFinished = 1u << 0,  // status: the sender has done its last round and only lingers
  kViewJoining = 1u << 1,   // status: the sender holds no model of this job yet
};

struct ViewMessage {
  ViewKind kind = ViewKind::status;
  std::uint8_t flags = 0;
  std::uint64_t view = 0;
  std::uint64_t round = 0;
  std::uint64_t iteration = 0;
  std::uint32_t source = 0;
  std::vector<std::uint32_t> peers;  // strictly increasing
};

/// invalid_option when the message breaks the layout's rules (flags on other kinds than
/// status, peers on prepare, unsorted or too many peers).
Error encode_view(const ViewMessage& message, std::vector<std::uint8_t>& payload);
Result<ViewMessage> decode_view(ByteSpan payload);

}  // namespace starling::protocols
