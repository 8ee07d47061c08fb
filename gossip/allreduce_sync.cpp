// The view's mean by ring all-reduce (gossip/allreduce_sync.h).
#include "gossip/allreduce_sync.h"

namespace starling::gossip {
namespace {

AllreduceOptions options_of(const SyncSetup& s) {
  AllreduceOptions a;
  a.timeout = s.spec.timeout;
  a.first_round = s.first_round;
  return a;
}

}  // namespace

AllreduceSync::AllreduceSync(const SyncSetup& s) : ring_(s.transport, s.members, s.model, options_of(s)) {}

}  // namespace starling::gossip
