#pragma once
// The exchange beside the compute (double buffering, as in overlap local SGD and Pipe-SGD).
// begin() copies the caller's model z into a snapshot and mixes the snapshot with the peers
// on a thread of its own (PeerExchange::exchange, elastic as ever: view changes, deaths,
// joins) while the caller's learners go on changing z; complete() waits for that mix and
// moves z by what it changed,
//
//     z ← z + (mixed − snapshot),
//
// so the peers' mix arrives one exchange late and every local step taken meanwhile is kept.
// When the mix moved this peer (it was left out and joined again, or fell far behind), the
// local steps were taken on a model the job has left: z ← mixed, the source's model, and the
// position comes back for the caller to continue from. exchange_now() is the strict form
// (z ← mixed, waited for), for where every peer must end with the same model.
//
// Use from one thread. The PeerExchange works on the snapshot and is used by one thread at
// a time (the mixing thread while a mix is pending); its byte counts may be read meanwhile,
// everything else of it only while nothing is pending.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include "gossip/peer_exchange.h"

namespace starling::gossip {

class OverlappedExchange {
 public:
  /// Connects to the peers (a PeerExchange over a snapshot of `length` floats). Throws
  /// GossipError as PeerExchange does.
  OverlappedExchange(const ExchangeSpec& spec, std::size_t length);
  /// Waits for a pending mix (its error is dropped).
  ~OverlappedExchange();
  OverlappedExchange(const OverlappedExchange&) = delete;
  OverlappedExchange& operator=(const OverlappedExchange&) = delete;

  /// PeerExchange::start with model[0, length): a peer that joins a running job gets the
  /// job's model into it and the position to continue from.
  std::optional<Position> start(float* model, std::uint64_t iteration);
  /// Snapshots model[0, length) and starts mixing it with the peers (PeerExchange::exchange
  /// with iteration and compute_seconds). InvalidArgument while a mix is pending.
  void begin(const float* model, std::uint64_t iteration, double compute_seconds);
  bool pending() const { return running_.valid(); }
  /// Waits for the pending mix and adds its change to model, or, when it moved this peer,
  /// puts the source's model there and returns the position. Nothing (nullopt) when none is
  /// pending. Rethrows the mix's error (TooFewPeers, TimeoutError, ...) with model untouched.
  std::optional<Position> complete(float* model);
  /// Strict: one mix of model with the peers, waited for: model ← mixed. InvalidArgument
  /// while a mix is pending (complete() it first).
  std::optional<Position> exchange_now(float* model, std::uint64_t iteration, double compute_seconds);

  /// The last mix's input (the snapshot) and output: how far the peers moved it is the
  /// consensus distance of the metrics. Valid after complete() or exchange_now().
  const std::vector<float>& snapshot() const { return snapshot_; }
  const std::vector<float>& mixed() const { return mixed_; }

  /// Seconds the mixes begun so far took on their thread, beside the caller's work; valid
  /// while nothing is pending.
  double overlapped_seconds() const { return overlapped_seconds_; }

  PeerExchange& peers() { return *exchange_; }
  const PeerExchange& peers() const { return *exchange_; }

 private:
  void take_snapshot(const float* model);

  std::vector<float> snapshot_;  // z as begin() found it
  std::vector<float> mixed_;     // the PeerExchange's model: the snapshot, then the mix
  std::unique_ptr<PeerExchange> exchange_;
  std::future<std::optional<Position>> running_;  // the mix in flight, on a thread of its own
  double overlapped_seconds_ = 0.0;  // written by the mixing thread, read after its future
};

}  // namespace starling::gossip
