#pragma once
// Test harness: p transports in one process sharing one ZeroMQ context, each bound to a
// free port on 127.0.0.1, and a way to run one function per peer on its own thread.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gossip/topology/topology.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"

namespace starling::gossip::testing {

class PeerGroup {
 public:
  explicit PeerGroup(int p) {
    for (int r = 0; r < p; ++r) {
      TransportOptions o;
      o.self = static_cast<PeerId>(r);
      o.bind_endpoint = "tcp://127.0.0.1:*";
      o.linger_ms = 200;
      for (int m = 0; m < p; ++m) o.accept.push_back(static_cast<PeerId>(m));
      transports_.push_back(std::make_unique<Transport>(context_, o));
    }
  }

  int size() const { return static_cast<int>(transports_.size()); }
  Transport& at(int r) { return *transports_[r]; }
  std::vector<PeerId> ids() const {
    std::vector<PeerId> v;
    for (int r = 0; r < size(); ++r) v.push_back(static_cast<PeerId>(r));
    return v;
  }

  void connect(int from, int to) { at(from).connect(static_cast<PeerId>(to), at(to).endpoint()); }
  void connect_ring() {
    if (size() > 1)
      for (int r = 0; r < size(); ++r) connect(r, (r + 1) % size());
  }
  void connect_topology(const Topology& t) {
    for (int r = 0; r < size(); ++r)
      for (int n : t.neighbors(r)) connect(r, n);
  }
  void connect_all() {
    for (int r = 0; r < size(); ++r)
      for (int n = 0; n < size(); ++n)
        if (n != r) connect(r, n);
  }

  /// Bytes peer `to` has accepted from peer `from`. Unlike the sender's own count, which
  /// its I/O thread may still be updating, it is final once `to` has consumed them.
  std::uint64_t bytes_received(int to, int from) {
    const TransportStats s = at(to).stats();
    const auto it = s.peers.find(static_cast<PeerId>(from));
    return it == s.peers.end() ? 0 : it->second.bytes_received;
  }

  /// Runs body(rank) on one thread per peer; rethrows the first exception after joining all.
  void run_all(const std::function<void(int)>& body) {
    std::vector<std::thread> threads;
    std::exception_ptr first;
    std::mutex mutex;
    for (int r = 0; r < size(); ++r)
      threads.emplace_back([&, r] {
        try {
          body(r);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!first) first = std::current_exception();
        }
      });
    for (auto& t : threads) t.join();
    if (first) std::rethrow_exception(first);
  }

 private:
  TransportContext context_;  // declared first: outlives every transport
  std::vector<std::unique_ptr<Transport>> transports_;
};

}  // namespace starling::gossip::testing
