#pragma once
// What the transports of a process share, named without ZeroMQ: either ZeroMQ's I/O
// threads, which move the bytes of every socket, and the ZAP handler that admits CURVE
// clients (gossip/transport/zmq/zap_handler.h); or, made with InMemory, a network in this
// process's memory (memory_network.h), where its peers reach each other without sockets or
// threads of their own. Every Transport made with a context must be destroyed before it.
#include <chrono>
#include <functional>
#include <memory>

#include "gossip/transport/link.h"

namespace starling::gossip {

class Inbox;
class MemoryNetwork;
class StatsRecorder;
struct TransportOptions;

/// Asks for an in-memory context; with a clock, time is the caller's and heartbeats go out
/// only when it calls memory()->beat() (memory_network.h).
struct InMemory {
  std::function<std::chrono::steady_clock::time_point()> clock;
};

class TransportContext {
 public:
  /// ZeroMQ; `io_threads`: the background threads that move the bytes of all its transports.
  explicit TransportContext(int io_threads = 1);
  explicit TransportContext(InMemory in_memory);
  ~TransportContext();
  TransportContext(const TransportContext&) = delete;
  TransportContext& operator=(const TransportContext&) = delete;

  /// The in-memory network, or null for ZeroMQ.
  MemoryNetwork* memory() { return memory_.get(); }
  /// The link of one transport (Transport's constructor calls it); IoError when its endpoint
  /// cannot be bound.
  std::unique_ptr<Link> open(const TransportOptions& options, Inbox& inbox, StatsRecorder& stats);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;  // ZeroMQ's; null in memory
  std::unique_ptr<MemoryNetwork> memory_;
};

}  // namespace starling::gossip
