// A D-PSGD round over the view (gossip/algorithms/dpsgd_sync.h).
#include "gossip/algorithms/dpsgd_sync.h"

#include "gossip/algorithms/view_topology.h"

namespace starling::gossip {

MixingSchedule view_schedule(const SyncSetup& s) {
  return schedule_by_name(s.spec.topology, static_cast<int>(s.members.size()), s.rank,
                          view_topology_options(s.spec, s.members));
}

NeighbourSync::NeighbourSync(const SyncSetup& s) : NeighbourSync(s, view_schedule(s)) {}

NeighbourSync::NeighbourSync(const SyncSetup& s, MixingSchedule schedule)
    : model_(s.model), gossip_(s.transport, s.members, std::move(schedule), round_options<GossipOptions>(s)) {}

}  // namespace starling::gossip
