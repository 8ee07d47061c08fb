#pragma once
// What the transports of a process share: ZeroMQ's I/O threads, which move the bytes of
// every socket, and the ZAP handler that admits CURVE clients (gossip/transport/zmq/zap_handler.h).
// Every Transport made with a context must be destroyed before it.
#include <memory>

namespace starling::gossip {

class TransportContext {
 public:
  /// `io_threads`: the background threads that move the bytes of all its transports.
  explicit TransportContext(int io_threads = 1);
  ~TransportContext();
  TransportContext(const TransportContext&) = delete;
  TransportContext& operator=(const TransportContext&) = delete;

 private:
  friend struct ZmqBridge;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace starling::gossip
