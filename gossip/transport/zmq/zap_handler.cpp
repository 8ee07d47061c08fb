// The per-context ZAP handler (gossip/transport/zmq/zap_handler.h).
#include "gossip/transport/zmq/zap_handler.h"

#include <atomic>
#include <chrono>
#include <utility>

#include <zmq.h>

#include "gossip/transport/error.h"

namespace starling::gossip {

namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr std::size_t kMaxRequestFrames = 16;  // RFC 27 requests have 6 + credential frames

// Handlers by context. An expired entry means its handler is still being torn down and
// still holds the ZAP endpoint; its destructor removes the entry once the endpoint is free.
std::mutex registry_mutex;
std::map<void*, std::weak_ptr<ZapHandler>> registry;

std::string unique_name(const char* prefix) {
  static std::atomic<std::uint64_t> next{0};
  return std::string(prefix) + std::to_string(next.fetch_add(1));
}

std::string z85_of(const zmq::message_t& credential) {
  if (credential.size() != 32) return {};
  char text[kZ85KeyLength + 1];
  if (!zmq_z85_encode(text, static_cast<const std::uint8_t*>(credential.data()), 32)) return {};
  return text;
}

}  // namespace

std::shared_ptr<ZapHandler> ZapHandler::acquire(zmq::context_t& context) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(registry_mutex);
      auto it = registry.find(context.handle());
      if (it == registry.end()) {
        std::shared_ptr<ZapHandler> handler(new ZapHandler(context));
        registry.emplace(context.handle(), handler);
        return handler;
      }
      if (std::shared_ptr<ZapHandler> live = it->second.lock()) return live;
    }
    // The previous handler of this context is releasing the endpoint; wait for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

ZapHandler::ZapHandler(zmq::context_t& context)
    : rep_(context, zmq::socket_type::rep),
      control_(context, zmq::socket_type::pair),
      stopper_(context, zmq::socket_type::pair) {
  rep_.set(zmq::sockopt::linger, 0);
  control_.set(zmq::sockopt::linger, 0);
  stopper_.set(zmq::sockopt::linger, 0);
  const std::string control = unique_name("inproc://starling-zap-control-");
  try {
    // Bound before any CURVE server exists: a CURVE server without a handler admits all.
    rep_.bind(kZapEndpoint);
    control_.bind(control);
    stopper_.connect(control);
  } catch (const zmq::error_t& e) {
    STARLING_GOSSIP_THROW(IoError, std::string("cannot bind the ZAP handler at ") + kZapEndpoint + ": " + e.what());
  }
  thread_ = std::thread([this] { run(); });
}

ZapHandler::~ZapHandler() {
  std::lock_guard<std::mutex> lock(registry_mutex);
  try {
    stopper_.send(zmq::str_buffer("stop"), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
    // The thread also ends when the context terminates; join below either way.
  }
  if (thread_.joinable()) thread_.join();
  try {
    // Unbinding inproc is synchronous, unlike close: the next handler can bind at once.
    rep_.unbind(kZapEndpoint);
  } catch (const zmq::error_t&) {
  }
  for (auto it = registry.begin(); it != registry.end();)
    it = it->second.expired() ? registry.erase(it) : std::next(it);
}

std::string ZapHandler::add_domain(const std::vector<std::string>& allowed, bool open, StatsRecorder& stats,
                                   RefusalLog log) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string name = "starling-" + std::to_string(next_domain_++);
  domains_[name] = Domain{{allowed.begin(), allowed.end()}, open, &stats, std::move(log)};
  return name;
}

void ZapHandler::admit(const std::string& domain, const std::string& public_key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = domains_.find(domain);
  if (it != domains_.end()) it->second.allowed.insert(public_key);
}

void ZapHandler::remove_domain(const std::string& domain) {
  std::lock_guard<std::mutex> lock(mutex_);
  domains_.erase(domain);
}

void ZapHandler::run() {
  try {
    std::vector<zmq::message_t> request;
    for (;;) {
      zmq::pollitem_t items[] = {{control_.handle(), 0, ZMQ_POLLIN, 0}, {rep_.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 2, std::chrono::milliseconds(-1));
      if (items[0].revents & ZMQ_POLLIN) return;
      if (!(items[1].revents & ZMQ_POLLIN)) continue;
      request.clear();
      zmq::message_t part;
      if (!rep_.recv(part, zmq::recv_flags::dontwait)) continue;
      bool more = part.more();
      request.push_back(std::move(part));
      while (more && rep_.recv(part, zmq::recv_flags::none)) {
        more = part.more();
        if (request.size() < kMaxRequestFrames) request.push_back(std::move(part));
      }
      answer(request);
    }
  } catch (const zmq::error_t&) {
    // Context terminated under us: nothing is left to guard, and no server can ask.
  }
}

void ZapHandler::answer(std::vector<zmq::message_t>& request) {
  // RFC 27: version, request id, domain, address, identity, mechanism, credentials...
  const bool well_formed = request.size() >= 6 && request[0].to_string_view() == "1.0";
  const std::string key = request.size() >= 7 ? z85_of(request[6]) : std::string();
  const bool ok = well_formed && admits(request[2].to_string(), request[5].to_string(), key,
                                         request[3].to_string());
  zmq::message_t id = well_formed ? std::move(request[1]) : zmq::message_t();
  rep_.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
  rep_.send(id, zmq::send_flags::sndmore);
  rep_.send(zmq::buffer(std::string(ok ? "200" : "400")), zmq::send_flags::sndmore);
  rep_.send(zmq::buffer(std::string(ok ? "OK" : "key not admitted")), zmq::send_flags::sndmore);
  // The user id becomes the connection's "User-Id" metadata: the client's own key.
  rep_.send(zmq::buffer(ok ? key : std::string()), zmq::send_flags::sndmore);
  rep_.send(zmq::message_t(), zmq::send_flags::none);
}

bool ZapHandler::admits(const std::string& domain, const std::string& mechanism, const std::string& key,
                        const std::string& address) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = domains_.find(domain);
  if (it == domains_.end()) return false;  // a transport already gone, or not ours
  Domain& d = it->second;
  if (mechanism == "CURVE" && !key.empty() && (d.open || d.allowed.count(key))) return true;
  d.stats->dropped("zap_refused");
  if (d.log)
    d.log("refused " + mechanism + " client " + (key.empty() ? std::string("without key") : "key " + key) +
          " from " + address + " (domain " + domain + ")");
  return false;
}

ZapRegistration::ZapRegistration(zmq::context_t& context, const CurveSecurity& security, StatsRecorder& stats)
    : handler_(ZapHandler::acquire(context)),
      domain_(handler_->add_domain(security.allowed_keys, security.open, stats, security.on_refusal)) {}

ZapRegistration::~ZapRegistration() { handler_->remove_domain(domain_); }

}  // namespace starling::gossip
