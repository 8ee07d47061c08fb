// The view's mean by ring all-reduce (gossip/algorithms/allreduce_sync.h).
#include "gossip/algorithms/allreduce_sync.h"

namespace starling::gossip {

AllreduceSync::AllreduceSync(const SyncSetup& s)
    : ring_(s.transport, s.members, s.model, round_options<AllreduceOptions>(s)) {}

}  // namespace starling::gossip
