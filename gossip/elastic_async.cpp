// Fault-tolerant asynchronous gossip (gossip/elastic_async.h).
#include "gossip/elastic_async.h"

#include <algorithm>

#include "gossip/control/job_start.h"
#include "gossip/control/join.h"
#include "gossip/control/model_transfer.h"
#include "gossip/transport/error.h"

namespace starling::gossip {

namespace {

AsyncGossipOptions async_options(const ExchangeSpec& spec, const ControlPlane& control) {
  AsyncGossipOptions a;
  a.max_staleness = spec.max_staleness;
  a.staleness_scaling = spec.staleness_scaling;
  a.aggregator = spec.aggregator;
  a.timeout = spec.timeout;
  a.seed = spec.seed + static_cast<std::uint64_t>(spec.rank);
  a.reachable = [&control](PeerId p) { return control.alive(p) && control.responsive(p); };
  return a;
}

}  // namespace

ElasticAsync::ElasticAsync(Transport& transport, ControlPlane& control, const ExchangeSpec& spec,
                           protocols::Span<float> model, std::vector<PeerId> neighbours)
    : transport_(transport),
      control_(control),
      spec_(spec),
      model_(model),
      neighbours_(std::move(neighbours)),
      async_(transport, neighbours_, async_options(spec, control)) {}

bool ElasticAsync::counts(PeerId peer) const { return control_.alive(peer) && control_.responsive(peer); }

std::optional<Position> ElasticAsync::start(std::uint64_t iteration) {
  control_.serve(model_, iteration);
  transport_.announce(0, iteration);
  JobStart job;  // without views any peer ahead means the job runs: reach 0
  job.peers = control_.watched();
  job.peers.push_back(transport_.self());
  job.round = iteration;
  job.patience = spec_.start_timeout;
  const bool fresh = !spec_.join && await_job(transport_, job) == JobState::fresh;
  control_.started();
  if (fresh) return std::nullopt;
  control_.log(spec_.join ? "joining the running job" : "the job is already running: joining it");
  ask_to_join();
  const std::optional<Position> at = take_over(neighbours_, Clock::now() + spec_.timeout);
  if (!at) STARLING_GOSSIP_THROW(TimeoutError, "no neighbour handed its model over before the deadline");
  return at;
}

// Hello to every live peer: those with another model shape refuse it (ControlPlane::refused).
void ElasticAsync::ask_to_join() {
  protocols::Hello hello;
  hello.parameter_count = model_.size();
  hello.tensor_sizes = spec_.tensor_sizes.empty() ? std::vector<std::uint64_t>{model_.size()} : spec_.tensor_sizes;
  hello.endpoint = transport_.endpoint();
  for (PeerId p : control_.join_contacts()) request_join(transport_, p, hello);
}

std::optional<Position> ElasticAsync::exchange(std::uint64_t iteration) {
  control_.serve(model_, iteration);
  transport_.announce(0, iteration);
  if (const std::optional<PeerId> ahead = far_ahead(iteration)) {
    control_.log("peer " + std::to_string(*ahead) + " and every other neighbour are far ahead of step " +
                 std::to_string(iteration) + ": taking its model and position");
    if (std::optional<Position> at = take_over({*ahead}, Clock::now() + spec_.timeout)) return at;
  }
  async_.run(model_, iteration);
  return std::nullopt;
}

// The nearest neighbour when every one that counts is more than 2s + 1 steps ahead (by the
// steps their heartbeats announce); nullopt otherwise.
std::optional<PeerId> ElasticAsync::far_ahead(std::uint64_t iteration) const {
  const auto heard = control_.liveness();
  std::optional<PeerId> nearest;
  std::uint64_t nearest_step = 0;
  for (PeerId n : neighbours_) {
    const auto it = heard.find(n);
    if (!counts(n) || it == heard.end() || !it->second.heartbeat) continue;
    if (it->second.round <= iteration + 2 * spec_.max_staleness + 1) return std::nullopt;
    if (!nearest || it->second.round < nearest_step) nearest = n, nearest_step = it->second.round;
  }
  return nearest;
}

// The model and position of the first of `sources` that hands it over; nullopt if none does.
std::optional<Position> ElasticAsync::take_over(const std::vector<PeerId>& sources, Clock::time_point deadline) {
  for (PeerId source : sources) {
    if (control_.refused()) STARLING_GOSSIP_THROW(InvalidArgument, "the running peers train a model of another shape");
    if (!control_.alive(source)) continue;
    try {
      const std::uint64_t iteration = fetch_state(transport_, control_, trusting(source), model_, deadline).iteration;
      control_.log("took the model of iteration " + std::to_string(iteration) + " from peer " + std::to_string(source));
      control_.serve(model_, iteration);
      transport_.announce(0, iteration);
      return Position{0, iteration};
    } catch (const MembershipChanged&) {  // that source died: try the next
    } catch (const TimeoutError&) {       // or did not answer in time
    } catch (const WrongState&) {         // or its chunks did not match its own digests
    }
  }
  return std::nullopt;
}

void ElasticAsync::finish() { async_.finish(model_); }

}  // namespace starling::gossip
