#pragma once
// Exchange beside computation (double buffering, as in overlap local SGD and Pipe-SGD).
// begin() copies the model z into a snapshot and mixes the snapshot with the peers on a
// worker thread of this class, while the caller's learners go on changing z; complete()
// waits for that mixing and moves z by what it changed,
//
//     z ← z + (mixed − snapshot),
//
// so the peers' average arrives one exchange late and every local step taken meanwhile is
// kept. exchange_now() is the strict form (z ← mixed, on the worker, waited for), which a
// caller uses where every peer must end with the same model (after the last step).
//
// The PeerExchange is built over the snapshot and used only on the worker thread, one
// exchange at a time (it is not thread-safe); its byte counts may be read from any thread.
// All peers make the same sequence of begin() / exchange_now() calls, as for PeerExchange.
// Use from one thread; the model passed to begin(), complete() and exchange_now() is the
// caller's and is touched only inside those calls.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gossip/peer_exchange.h"

namespace starling::gossip {

class OverlappedExchange {
 public:
  /// Connects to the peers (PeerExchange over a snapshot of `length` floats) and starts the
  /// worker thread. Throws GossipError as PeerExchange does.
  OverlappedExchange(const ExchangeSpec& spec, std::size_t length);
  /// Waits for a running exchange (its error is dropped) and stops the worker.
  ~OverlappedExchange();
  OverlappedExchange(const OverlappedExchange&) = delete;
  OverlappedExchange& operator=(const OverlappedExchange&) = delete;

  /// Snapshots model[0, length) and starts mixing it with the peers (PeerExchange::exchange
  /// with step and compute_seconds). InvalidArgument while an exchange is pending.
  void begin(const float* model, std::uint64_t step, double compute_seconds);
  bool pending() const { return pending_; }
  /// Waits for the pending exchange and adds its change to model; rethrows its error.
  /// Returns the seconds spent waiting. Nothing to do (0) when none is pending.
  double complete(float* model);
  /// A pending exchange completed first, then one strict exchange: model ← the mix of model
  /// with the peers, and with `close` the closing average (PeerExchange::average_models).
  /// Returns the seconds it took.
  double exchange_now(float* model, std::uint64_t step, double compute_seconds, bool close = false);
  /// ‖mixed − snapshot‖ / ‖snapshot‖ of the last completed exchange: how far the peers
  /// moved this one's model (the consensus distance of the metrics).
  double last_distance() const { return last_distance_; }

  PeerExchange& peers() { return *exchange_; }
  const PeerExchange& peers() const { return *exchange_; }

 private:
  void serve();
  void start(std::function<void()> job);
  void wait_for_job();

  std::vector<float> base_;      // z as begin() found it
  std::vector<float> snapshot_;  // the PeerExchange's model: base_, then the mix
  std::unique_ptr<PeerExchange> exchange_;
  bool pending_ = false;
  double last_distance_ = 0.0;

  // The worker: one job at a time, handed over under mutex_.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> job_;
  bool busy_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace starling::gossip
