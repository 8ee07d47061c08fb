// The view's compressed all-reduce (gossip/algorithms/compressed_allreduce_sync.h).
#include "gossip/algorithms/compressed_allreduce_sync.h"

namespace starling::gossip {

CompressedAllreduceSync::CompressedAllreduceSync(const SyncSetup& s)
    : allreduce_(s.transport, s.members, s.model, s.spec.codec, s.codec_options,
                 round_options<CompressedAllreduceOptions>(s)) {}

}  // namespace starling::gossip
