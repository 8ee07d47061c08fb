#pragma once
// How a text corpus's training bytes are split across peers: one list of byte ranges per
// peer, a pure function of (corpus, peers, spec). Windows are then drawn from a peer's
// ranges (learners/data/text_sampler.h); a window never crosses a range's end.
//
//   iid        every peer gets every file's whole training part; peers differ by their seeds.
//   by-file    each peer its own files, whole: the files by training bytes, largest first,
//              each to the peer with the fewest bytes so far (the lower rank on a tie), so
//              the peers' shares are near even and each peer's text is a few topics. Needs
//              at least as many files as peers.
//   dirichlet  per file, shares p ~ Dir(alpha) over the peers (dirichlet_shares with the
//              files as the classes); the file's training part is cut into contiguous
//              pieces at dirichlet_cuts, in peer order.
//   shards and by-class need labels and are refused.
#include "learners/data/partition.h"
#include "learners/data/text_corpus.h"

#include <cstdint>
#include <vector>

namespace starling {

/// Bytes [begin, end) of TextCorpus::bytes(), inside one file's training part.
struct TextRange {
  uint64_t begin = 0, end = 0;
  uint32_t file = 0;
  bool operator==(const TextRange& o) const { return begin == o.begin && end == o.end && file == o.file; }
};
using TextPart = std::vector<TextRange>;

/// One part per peer (see the header comment); throws PartitionError for no peers, for
/// shards and by-class, for fewer files than peers under by-file, and for a bad alpha.
std::vector<TextPart> partition_text(const TextCorpus& corpus, int peers, const PartitionSpec& spec);

/// Window starts that `part` offers for windows of `window` bytes: every range holds
/// max(0, length − window + 1).
uint64_t window_starts(const TextPart& part, int window);

}  // namespace starling
