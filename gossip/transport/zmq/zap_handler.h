#pragma once
// The ZAP handler (ZeroMQ RFC 27) that decides which CURVE clients a transport admits
// (private to the transport's .cpp files: gossip/transport/zmq/zmq_bridge.h).
// ZeroMQ asks the one REP socket bound at inproc://zeromq.zap.01 in a context, so there
// is one handler per context, shared by all transports in it and run on its own small
// thread: a transport's I/O thread could serve it, but then a second transport in the
// same context (tests, several peers in one process) could not bind. Each transport
// registers a ZAP domain with its own allow-list; requests for an unknown domain, another
// mechanism or a key not on the list are refused, counted and logged.
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "gossip/transport/curve.h"
#include "gossip/transport/transport_stats.h"

namespace starling::gossip {

class ZapHandler {
 public:
  /// The context's handler, bound and started on first use; IoError when another ZAP
  /// handler already holds inproc://zeromq.zap.01 in this context.
  static std::shared_ptr<ZapHandler> acquire(zmq::context_t& context);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  /// A new domain admitting `allowed`; refusals are counted in stats as "zap_refused".
  /// stats must outlive the registration (until remove_domain returns).
  /// An `open` domain admits every CURVE client key.
  std::string add_domain(const std::vector<std::string>& allowed, bool open, StatsRecorder& stats, RefusalLog log);
  void admit(const std::string& domain, const std::string& public_key);
  void remove_domain(const std::string& domain);

 private:
  struct Domain {
    std::set<std::string> allowed;
    bool open = false;
    StatsRecorder* stats = nullptr;
    RefusalLog log;
  };

  explicit ZapHandler(zmq::context_t& context);
  void run();
  void answer(std::vector<zmq::message_t>& request);
  bool admits(const std::string& domain, const std::string& mechanism, const std::string& key,
              const std::string& address);

  zmq::socket_t rep_;
  zmq::socket_t control_;  // owner's stop signal arrives here
  zmq::socket_t stopper_;  // the owner's end of the control pair
  std::mutex mutex_;
  std::map<std::string, Domain> domains_;
  std::uint64_t next_domain_ = 0;
  std::thread thread_;
};

/// A transport's domain in its context's handler, removed on destruction.
class ZapRegistration {
 public:
  ZapRegistration(zmq::context_t& context, const CurveSecurity& security, StatsRecorder& stats);
  ~ZapRegistration();
  ZapRegistration(const ZapRegistration&) = delete;
  ZapRegistration& operator=(const ZapRegistration&) = delete;

  const std::string& domain() const { return domain_; }
  void admit(const std::string& public_key) { handler_->admit(domain_, public_key); }

 private:
  std::shared_ptr<ZapHandler> handler_;
  std::string domain_;
};

}  // namespace starling::gossip
