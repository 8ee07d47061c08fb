// Peers of one process reaching each other in memory (gossip/transport/memory/memory_network.h).
#include "gossip/transport/memory/memory_network.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "gossip/transport/admission.h"
#include "gossip/transport/error.h"
#include "gossip/transport/heartbeat_frame.h"
#include "gossip/transport/inbox.h"
#include "gossip/transport/transport.h"
#include "protocols/frame.h"

namespace starling::gossip {

// Locks, taken only in this order: a Sender's, the network's, a Port's; the senders' list
// and the heartbeat threads' stop have locks of their own, taken alone.
struct MemoryNetwork::Port {
  Port(const TransportOptions& o, Inbox& in, StatsRecorder& stats)
      : admission(o.accept, o.limits, o.accept_unknown_hello, o.max_messages_per_second, stats), inbox(in) {}

  // False, the frame left with the caller, once the owner stopped.
  bool receive(PeerId from, Payload& head, Payload& payload, Clock::time_point now) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!open) return false;
    receive_locked(from, std::move(head), std::move(payload), now);
    return true;
  }
  void receive_locked(PeerId from, Payload head, Payload payload, Clock::time_point now) {
    if (!open) return;  // its owner stopped: as a closed socket, it reads nothing more
    const std::optional<Admission::Screened> header = admission.screen(from, head.bytes(), payload.bytes(), now);
    if (!header) return;
    const std::uint64_t bytes = head.size() + payload.size();
    admission.pass(from, *header, std::move(payload), bytes, now, inbox);
  }
  // A heartbeat, from bytes the sender keeps: only a payload small enough to be held in
  // place is made (no allocation, which a thousand threads would contend for). Skipped
  // when the port is busy; false once the owner stopped.
  bool beat(PeerId from, protocols::ByteSpan head, protocols::ByteSpan payload, Clock::time_point now) {
    std::unique_lock<std::mutex> lock(mutex, std::try_to_lock);
    if (!lock) return true;
    if (!open) return false;
    const std::optional<Admission::Screened> header = admission.screen(from, head, payload, now);
    if (header) admission.pass(from, *header, Payload(payload), head.size() + payload.size(), now, inbox);
    return true;
  }
  void accept(PeerId peer) {
    std::lock_guard<std::mutex> lock(mutex);
    admission.accept(peer);
  }
  void close() {
    std::lock_guard<std::mutex> lock(mutex);
    open = false;
    inbox.close();
  }

  std::mutex mutex;
  bool open = true;
  Admission admission;
  Inbox& inbox;
};

struct MemoryNetwork::Sender {
  Sender(MemoryNetwork& n, const TransportOptions& o, StatsRecorder& s)
      : network(n), self(o.self), stats(s), interval(o.heartbeat_interval) {}

  struct Route {
    std::string endpoint;
    std::shared_ptr<Port> port;  // who held the endpoint at the last delivery
  };

  void send(PeerId to, Payload head, Payload payload) {
    std::lock_guard<std::mutex> lock(mutex);
    const auto route = routes.find(to);
    if (stopped || route == routes.end()) return stats.dropped("unknown_destination");
    stats.sent(to, head.size() + payload.size(), protocols::is_control_frame(head.bytes()));
    deliver(route->second, std::move(head), std::move(payload));
  }

  // Straight to the port of the last delivery while it is open (no look-up, no network
  // lock), else through the network to whoever holds the endpoint now.
  void deliver(Route& route, Payload head, Payload payload) {
    if (route.port && route.port->receive(self, head, payload, network.now())) return;
    route.port = network.deliver(route.endpoint, self, std::move(head), std::move(payload));
  }

  // One heartbeat to every watched peer when one is due (io_loop.h's rule). A heartbeat
  // thread never waits on a lock whose holder may be preempted among a thousand threads: a
  // sender busy sending is beaten at the next tick, a busy receiver misses this heartbeat.
  void beat(Clock::time_point now) {
    std::unique_lock<std::mutex> lock(mutex, std::try_to_lock);
    if (!lock || stopped || interval.count() <= 0 || now < next_beat) return;
    std::vector<std::uint8_t> head, payload;
    encode_periodic_heartbeat(self, view, round, now, head, payload);
    for (auto& [peer, route] : routes) {
      if (watched && !watched->count(peer)) continue;
      stats.sent(peer, head.size() + payload.size(), true);
      const protocols::ByteSpan h(head.data(), head.size()), p(payload.data(), payload.size());
      if (route.port && route.port->beat(self, h, p, now)) continue;
      deliver(route, Payload(h), Payload(p));
    }
    next_beat = now + interval;
  }

  MemoryNetwork& network;
  const PeerId self;
  StatsRecorder& stats;
  const std::chrono::milliseconds interval;
  std::mutex mutex;
  bool stopped = false;
  std::map<PeerId, Route> routes;
  std::optional<std::set<PeerId>> watched;    // none: every connected peer
  std::uint64_t view = 0, round = 0;
  Clock::time_point next_beat{};
};

namespace {

// The Link a Transport holds: its port, where others' frames arrive, and its sender.
class MemoryLink final : public Link {
 public:
  MemoryLink(MemoryNetwork& network, std::string endpoint, std::shared_ptr<MemoryNetwork::Port> port,
             std::shared_ptr<MemoryNetwork::Sender> sender)
      : network_(network), endpoint_(std::move(endpoint)), port_(std::move(port)), sender_(std::move(sender)) {}
  ~MemoryLink() override { stop(); }

  const std::string& endpoint() const override { return endpoint_; }

  void connect(PeerId peer, const std::string& endpoint, const std::string* /*server_key*/) override {
    {
      std::lock_guard<std::mutex> lock(sender_->mutex);
      if (!sender_->routes.emplace(peer, MemoryNetwork::Sender::Route{endpoint, nullptr}).second)
        STARLING_GOSSIP_THROW(IoError, "peer " + std::to_string(peer) + " already connected");
    }
    port_->accept(peer);
  }
  void accept(PeerId peer) override { port_->accept(peer); }
  void disconnect(PeerId peer) override {
    std::lock_guard<std::mutex> lock(sender_->mutex);
    sender_->routes.erase(peer);
  }
  void send(PeerId to, Payload head, Payload payload) override {
    sender_->send(to, std::move(head), std::move(payload));
  }
  void watch(std::vector<PeerId> peers) override {
    std::lock_guard<std::mutex> lock(sender_->mutex);
    sender_->watched = std::set<PeerId>(peers.begin(), peers.end());
  }
  void announce(std::uint64_t view, std::uint64_t round) override {
    std::lock_guard<std::mutex> lock(sender_->mutex);
    sender_->view = view;
    sender_->round = round;
  }
  void admit(const std::string& /*public_key*/) override {
    STARLING_GOSSIP_THROW(InvalidArgument, "admit: an in-memory link has no CURVE allow-list");
  }
  void stop() override {
    {
      std::lock_guard<std::mutex> lock(sender_->mutex);
      if (sender_->stopped) return;
      sender_->stopped = true;
    }
    network_.unbind(endpoint_, port_.get());
    port_->close();
  }

 private:
  MemoryNetwork& network_;
  std::string endpoint_;
  std::shared_ptr<MemoryNetwork::Port> port_;
  std::shared_ptr<MemoryNetwork::Sender> sender_;
};

// How often the heartbeat threads look for links due to beat, and how many share them: a
// few, since among a thousand peers' busy threads a single one gets too small a share of
// the cores to beat for all of them in time.
constexpr std::chrono::milliseconds kBeatTick{5};
constexpr std::size_t kBeaters = 4;
// Frames held for one endpoint nobody holds (a peer not started yet, or gone for good).
constexpr std::size_t kHeldFrames = 10000;
constexpr std::size_t kHeldBytes = std::size_t{64} << 20;

}  // namespace

MemoryNetwork::MemoryNetwork(std::function<Clock::time_point()> clock) : clock_(std::move(clock)) {
  if (!clock_)
    for (std::size_t k = 0; k < kBeaters; ++k) beaters_.emplace_back([this, k] { beat_until_stopped(k); });
}

MemoryNetwork::~MemoryNetwork() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  for (std::thread& t : beaters_) t.join();
}

void MemoryNetwork::beat_until_stopped(std::size_t k) {
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stop_.wait_for(lock, kBeatTick, [this] { return stopping_; })) {
    lock.unlock();
    beat(Clock::now(), k, kBeaters);
    lock.lock();
  }
}

std::unique_ptr<Link> MemoryNetwork::open(const TransportOptions& options, Inbox& inbox, StatsRecorder& stats) {
  if (options.curve)
    STARLING_GOSSIP_THROW(InvalidArgument, "CURVE needs a wire to secure; peers in memory have none");
  auto port = std::make_shared<Port>(options, inbox, stats);
  auto sender = std::make_shared<Sender>(*this, options, stats);
  std::string name = options.bind_endpoint;
  // What was sent before the endpoint was bound arrives first, in its order: the port is
  // locked before anyone can find it, and its held frames go in outside the network's lock.
  std::unique_lock<std::mutex> port_lock(port->mutex);
  std::deque<Held> held;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool any = name.size() >= 2 && name.compare(name.size() - 2, 2, ":*") == 0;
    if (any) name = "mem://" + std::to_string(next_name_++);
    if (ports_.count(name))
      STARLING_GOSSIP_THROW(IoError, "cannot bind " + name + ": another peer of this process holds it");
    if (const auto it = held_.find(name); it != held_.end()) {
      held = std::move(it->second);
      held_.erase(it);
      held_bytes_.erase(name);
    }
    ports_.emplace(name, port);
  }
  for (Held& h : held) port->receive_locked(h.from, std::move(h.head), std::move(h.payload), now());
  port_lock.unlock();
  {
    std::lock_guard<std::mutex> lock(senders_mutex_);
    senders_.erase(std::remove_if(senders_.begin(), senders_.end(), [](const auto& s) { return s.expired(); }),
                   senders_.end());
    senders_.push_back(sender);
  }
  return std::make_unique<MemoryLink>(*this, name, std::move(port), std::move(sender));
}

std::shared_ptr<MemoryNetwork::Port> MemoryNetwork::deliver(const std::string& endpoint, PeerId from, Payload head,
                                                             Payload payload) {
  std::shared_ptr<Port> port;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = ports_.find(endpoint);
    if (it == ports_.end()) {
      // As ZeroMQ queues for a peer not there yet; bounded, for one that never comes back.
      std::deque<Held>& queue = held_[endpoint];
      std::size_t& bytes = held_bytes_[endpoint];
      if (queue.size() < kHeldFrames && bytes + payload.size() <= kHeldBytes) {
        bytes += head.size() + payload.size();
        queue.push_back(Held{from, std::move(head), std::move(payload)});
      }
      return nullptr;
    }
    port = it->second;
  }
  // A port unbound meanwhile has stopped: the frame goes where a closed socket's would.
  port->receive(from, head, payload, now());
  return port;
}

void MemoryNetwork::unbind(const std::string& endpoint, const Port* port) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = ports_.find(endpoint);
  if (it != ports_.end() && it->second.get() == port) ports_.erase(it);
}

void MemoryNetwork::beat(Clock::time_point now) { beat(now, 0, 1); }

void MemoryNetwork::beat(Clock::time_point now, std::size_t k, std::size_t of) {
  std::vector<std::shared_ptr<Sender>> senders;
  {
    std::lock_guard<std::mutex> lock(senders_mutex_);
    for (std::size_t i = k; i < senders_.size(); i += of)
      if (auto s = senders_[i].lock()) senders.push_back(std::move(s));
  }
  for (const auto& s : senders) s->beat(now);
}

}  // namespace starling::gossip
