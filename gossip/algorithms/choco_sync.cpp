// A CHOCO-SGD round over the view (gossip/algorithms/choco_sync.h).
#include "gossip/algorithms/choco_sync.h"

#include "gossip/algorithms/dpsgd_sync.h"

namespace starling::gossip {
namespace {

ChocoOptions options_of(const SyncSetup& s) {
  ChocoOptions c = round_options<ChocoOptions>(s);
  c.gamma = s.spec.gamma;
  return c;
}

}  // namespace

ChocoSync::ChocoSync(const SyncSetup& s)
    : model_(s.model), choco_(s.transport, s.members, view_schedule(s), s.spec.codec, s.codec_options, options_of(s)) {}

}  // namespace starling::gossip
