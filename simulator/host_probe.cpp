// A crowded host's round, measured: `peers` peers in this process, each a node thread
// with its learners on threads of their own, stepping real replicas on their shards of a
// training set of the real size; the node hands them a round's steps, waits for them,
// averages them and mixes through gossip's real PeerExchange (its own ZeroMQ context and
// transport, on 127.0.0.1), as `peers` peer processes on this host would. When their
// threads outnumber the cores, one peer's exchange runs while another's learners hold the
// cores, every message waits for a core, and the exchange's own CPU work (reductions,
// codecs, mixing) competes with the steps: what an α–β model of the link cannot show.
// Each peer's rounds are timed after two warm-up rounds.
#include "gossip/peer_exchange.h"
#include "gossip/transport/endpoint.h"
#include "learners/tasks/image_task.h"
#include "simulator/median.h"
#include "simulator/probes.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace starling::simulator {
namespace {

constexpr int kWarmRounds = 2;

// The training set at its real size, tiled from a small synthetic one: the bytes do not
// matter, the addresses do. Each peer samples its own shard of it, as a launch's peers do
// of the one file they map, so the batches come from memory, not from a cache holding them all.
Dataset training_set(const LearnerSpec& learner, uint32_t samples) {
  const uint32_t tile = std::min<uint32_t>(samples, 512);
  const TrainTest small = make_synthetic(tile, 1, learner.seed, learner.model.input, learner.model.classes);
  const std::size_t record = static_cast<std::size_t>(small.train.shape().size()) + 1;
  std::vector<uint8_t> records(static_cast<std::size_t>(samples) * record);
  for (uint32_t i = 0; i < samples; ++i) {
    const uint32_t from = i % tile;
    records[i * record] = small.train.label(from);
    std::copy_n(small.train.pixels(from), record - 1, &records[i * record + 1]);
  }
  return Dataset::from_records(samples, small.train.shape(), small.train.classes(), std::move(records));
}

// A node's learners: each round, every learner steps its replica `period` times. Learner i
// of peer r trains on shard r·learners + i, as in a launch.
class LearnerCrew {
 public:
  LearnerCrew(const LearnerSpec& spec, const Dataset& data, int learners, int period, int rank, int peers)
      : period_(period) {
    const auto task = std::make_shared<const ImageTask>(data, data);
    for (int i = 0; i < learners; ++i) {
      LearnerSpec own = spec;
      own.shard = rank * learners + i, own.shards = peers * learners;
      replicas_.push_back(std::make_unique<Learner>(own, task));
    }
    const Model& first = replicas_.front()->model();
    central_.assign(first.params(), first.params() + first.param_count());
    for (auto& r : replicas_) threads_.emplace_back([this, learner = r.get()] { work(*learner); });
  }
  ~LearnerCrew() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  /// The node's model, which the exchange mixes.
  protocols::Span<float> central() { return protocols::Span<float>(central_.data(), central_.size()); }

  /// Hands out one round, waits until every learner has done it and averages the replicas
  /// into the node's model, as a node does before it mixes.
  void round() {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ++order_, done_ = 0;
      wake_.notify_all();
      reported_.wait(lock, [&] { return done_ == static_cast<int>(replicas_.size()); });
    }
    const float share = 1.0f / static_cast<float>(replicas_.size());
    std::fill(central_.begin(), central_.end(), 0.0f);
    for (auto& r : replicas_) {
      const float* x = r->model().params();
      for (std::size_t i = 0; i < central_.size(); ++i) central_[i] += share * x[i];
    }
  }

 private:
  void work(Learner& learner) {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || order_ != seen; });
        if (stop_) return;
        seen = order_;
      }
      std::copy(central_.begin(), central_.end(), learner.model().params());  // the mixed model
      for (int s = 0; s < period_; ++s) learner.step(1e-4f);
      std::lock_guard<std::mutex> lock(mutex_);
      ++done_;
      reported_.notify_one();
    }
  }

  const int period_;
  std::vector<std::unique_ptr<Learner>> replicas_;
  std::vector<std::thread> threads_;
  std::vector<float> central_;
  std::mutex mutex_;
  std::condition_variable wake_, reported_;
  std::uint64_t order_ = 0;
  int done_ = 0;
  bool stop_ = false;
};

gossip::ExchangeSpec probe_spec(const gossip::ExchangeSpec& config, const std::vector<std::string>& endpoints, int rank) {
  gossip::ExchangeSpec s;
  s.mode = config.mode, s.topology = config.topology, s.random_degree = config.random_degree, s.seed = config.seed;
  s.clique_size = config.clique_size;
  s.codec = config.codec, s.codec_options = config.codec_options, s.gamma = config.gamma;
  s.max_staleness = config.max_staleness, s.staleness_scaling = config.staleness_scaling;
  s.adaptive = config.adaptive, s.adaptive_options = config.adaptive_options;
  s.timeout = s.start_timeout = std::chrono::milliseconds(20000);
  s.rank = rank;
  for (std::size_t i = 0; i < endpoints.size(); ++i) s.peers.push_back({static_cast<gossip::PeerId>(i), endpoints[i]});
  return s;
}

}  // namespace

double measure_host_round_seconds(const HostRound& probe) {
  const int q = std::clamp(probe.peers, 2, 16), period = std::max(1, probe.period);
  const std::vector<std::string> endpoints = gossip::free_loopback_endpoints(q);
  const int learners = std::max(1, probe.learners);
  const auto least = static_cast<uint32_t>(q * learners * probe.learner.batch);
  const Dataset data = training_set(probe.learner, std::max(probe.train_samples, least));
  std::vector<double> seconds(static_cast<std::size_t>(q));
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> nodes;
  for (int r = 0; r < q; ++r)
    nodes.emplace_back([&, r] {
      try {
        LearnerCrew crew(probe.learner, data, learners, period, r, q);
        gossip::PeerExchange exchange(probe_spec(probe.exchange, endpoints, r), crew.central());
        exchange.start(0);
        double start = now_seconds();
        for (int round = 0; round < kWarmRounds + probe.rounds; ++round) {
          if (round == kWarmRounds) start = now_seconds();
          crew.round();
          exchange.exchange(static_cast<std::uint64_t>(round + 1) * period);
        }
        seconds[static_cast<std::size_t>(r)] = (now_seconds() - start) / probe.rounds;
        exchange.finish();
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& t : nodes) t.join();
  if (failure) std::rethrow_exception(failure);
  // The host's samples/s is the sum of its peers' rates: their harmonic mean round.
  double rate = 0.0;
  for (double s : seconds) rate += 1.0 / std::max(s, 1e-9);
  return q / rate;
}

}  // namespace starling::simulator
