// The view's compressed all-reduce (gossip/algorithms/compressed_allreduce_sync.h).
#include "gossip/algorithms/compressed_allreduce_sync.h"

namespace starling::gossip {

CompressedAllreduceSync::CompressedAllreduceSync(const SyncSetup& s)
    : allreduce_(s.transport, s.members, s.model, s.spec.codec, s.codec_options,
                 round_options<CompressedAllreduceOptions>(s)) {}

std::vector<float> CompressedAllreduceSync::state() const {
  std::vector<float> values = allreduce_.state();
  if (!values.empty()) values.insert(values.begin(), allreduce_.base().begin(), allreduce_.base().end());
  return values;
}

bool CompressedAllreduceSync::restore(const std::vector<float>& values) {
  if (values.empty()) return true;  // taken before the first round: nothing to go on from
  const std::size_t n = allreduce_.base().size();
  return values.size() > n && allreduce_.resume({values.data(), n}, {values.data() + n, values.size() - n});
}

}  // namespace starling::gossip
