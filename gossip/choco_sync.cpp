// A CHOCO-SGD round over the view (gossip/choco_sync.h).
#include "gossip/choco_sync.h"

#include "gossip/gossip_sync.h"

namespace starling::gossip {
namespace {

ChocoOptions options_of(const SyncSetup& s) {
  ChocoOptions c;
  c.gamma = s.spec.gamma;
  c.timeout = s.spec.timeout;
  c.first_round = s.first_round;
  return c;
}

}  // namespace

ChocoSync::ChocoSync(const SyncSetup& s)
    : model_(s.model), choco_(s.transport, s.members, view_schedule(s), s.spec.codec, s.codec_options, options_of(s)) {}

}  // namespace starling::gossip
