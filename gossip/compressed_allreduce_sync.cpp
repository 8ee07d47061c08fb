// The view's compressed all-reduce (gossip/compressed_allreduce_sync.h).
#include "gossip/compressed_allreduce_sync.h"

namespace starling::gossip {
namespace {

CompressedAllreduceOptions options_of(const SyncSetup& s) {
  CompressedAllreduceOptions c;
  c.timeout = s.spec.timeout;
  c.first_round = s.first_round;
  return c;
}

}  // namespace

CompressedAllreduceSync::CompressedAllreduceSync(const SyncSetup& s)
    : allreduce_(s.transport, s.members, s.model, s.spec.codec, s.codec_options, options_of(s)) {}

}  // namespace starling::gossip
