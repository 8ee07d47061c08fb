#pragma once
// The choice of link for the transports of a process, named without ZeroMQ: either
// ZeroMQ's I/O threads, which move the bytes of every socket, and the ZAP handler that
// admits CURVE clients (gossip/transport/zmq/); or, made with InMemory, a network in this
// process's memory (gossip/transport/memory/), where its peers reach each other without
// sockets or threads of their own. Every Transport made with a context must be destroyed
// before it. The transport itself needs only the LinkFactory (link.h); this is the one
// place that names both kinds.
#include <chrono>
#include <functional>
#include <memory>

#include "gossip/transport/link.h"

namespace starling::gossip {

class MemoryNetwork;

/// Asks for an in-memory context; with a clock, time is the caller's and heartbeats go out
/// only when it calls memory()->beat() (gossip/transport/memory/memory_network.h).
struct InMemory {
  std::function<std::chrono::steady_clock::time_point()> clock;
};

class TransportContext final : public LinkFactory {
 public:
  /// ZeroMQ; `io_threads`: the background threads that move the bytes of all its transports.
  explicit TransportContext(int io_threads = 1);
  explicit TransportContext(InMemory in_memory);
  ~TransportContext() override;
  TransportContext(const TransportContext&) = delete;
  TransportContext& operator=(const TransportContext&) = delete;

  /// The in-memory network, or null for ZeroMQ.
  MemoryNetwork* memory() { return memory_; }
  std::unique_ptr<Link> open(const TransportOptions& options, Inbox& inbox, StatsRecorder& stats) override;

 private:
  std::unique_ptr<LinkFactory> links_;
  MemoryNetwork* memory_ = nullptr;  // links_, when in memory
};

}  // namespace starling::gossip
