// A CHOCO-SGD round over the view (gossip/choco_sync.h).
#include "gossip/choco_sync.h"

#include "gossip/gossip_sync.h"

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
