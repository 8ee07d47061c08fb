// A peer of an open swarm: the first, or a newcomer that bootstraps (job/swarm_peer.h).
#include "job/swarm_peer.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "gossip/control/join.h"
#include "gossip/transport/error.h"
#include "gossip/transport/link.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"
#include "gossip/transport/zmq/curve_pairs.h"

namespace starling::job {

namespace {

using Clock = std::chrono::steady_clock;

// How long one bootstrap address has to answer once it accepts connections.
constexpr std::chrono::seconds kAnswerWithin{10};
// How often a newcomer follows a redirect to the leader before it gives up.
constexpr int kMaxRedirects = 4;

struct HostPort {
  std::string host, port;
};

// A peer to ask: a bootstrap address, HOST:PORT (an endpoint once asked), and with CURVE
// "/KEY", the peer's public key (Z85, always the last 40 characters: Z85 has '/' and ':' of
// its own).
struct Seed {
  std::string address, key;
};

Seed seed_of(const std::string& text, bool curve) {
  const std::size_t n = gossip::kZ85KeyLength + 1;
  const bool keyed = text.size() > n && text[text.size() - n] == '/';
  Seed seed{keyed ? text.substr(0, text.size() - n) : text, keyed ? text.substr(text.size() - n + 1) : std::string()};
  if (keyed && !gossip::is_z85_key(seed.key))
    throw ConfigError("--bootstrap: \"" + seed.key + "\" after the address is not a CURVE public key (Z85)");
  if (curve && !keyed)
    throw ConfigError("--bootstrap: with security.curve give HOST:PORT/KEY, the key a running peer logs "
                      "(\"others join with --bootstrap ...\")");
  if (!curve && keyed)
    throw ConfigError("--bootstrap: " + text + " names a CURVE key, and this job's config has security.curve off");
  return seed;
}

// "HOST:PORT" or "tcp://HOST:PORT"; ConfigError naming `what` otherwise.
HostPort host_port(std::string text, const std::string& what) {
  if (text.rfind("tcp://", 0) == 0) text = text.substr(6);
  const auto colon = text.rfind(':');
  const std::string port = colon == std::string::npos ? std::string() : text.substr(colon + 1);
  if (colon == std::string::npos || colon == 0 || port.empty() ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) || std::stoi(port) < 1 ||
      std::stoi(port) > 65535)
    throw ConfigError(what + ": expected HOST:PORT, got \"" + text + "\"");
  return {text.substr(0, colon), port};
}

std::string tcp(const HostPort& a) { return "tcp://" + a.host + ":" + a.port; }

// Whether something accepts TCP connections at `a` (one try, up to a second).
bool accepts_connections(const HostPort& a) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (::getaddrinfo(a.host.c_str(), a.port.c_str(), &hints, &found) != 0) return false;
  bool ok = false;
  for (addrinfo* p = found; p && !ok; p = p->ai_next) {
    const int fd = ::socket(p->ai_family, p->ai_socktype | SOCK_NONBLOCK, p->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, p->ai_addr, p->ai_addrlen) == 0) {
      ok = true;
    } else if (errno == EINPROGRESS) {
      pollfd w{fd, POLLOUT, 0};
      int error = 0;
      socklen_t len = sizeof error;
      ok = ::poll(&w, 1, 1000) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return ok;
}

// Waits, with back-off, until `a` accepts connections or the deadline passes.
bool await_listener(const HostPort& a, Clock::time_point deadline, int& tries) {
  auto pause = std::chrono::milliseconds(200);
  for (;;) {
    ++tries;
    if (accepts_connections(a)) return true;
    if (Clock::now() + pause >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(5000));
  }
}

std::string read_invitation(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path);
  if (!in) throw ConfigError("--invitation: cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether the peer a redirect names accepts connections (an endpoint that does not parse
// does not): a dead leader's port on a live host refuses at once.
bool leader_listens(const std::string& endpoint) {
  try {
    return accepts_connections(host_port(endpoint, "the leader's endpoint"));
  } catch (const ConfigError&) {
    return false;
  }
}

// The answer of the peer at `endpoint` to `request`; nullopt when none comes by the deadline.
std::optional<gossip::BootstrapReply> answer(gossip::Transport& transport, const std::string& endpoint,
                                             const std::string& key, const gossip::BootstrapRequest& request,
                                             Clock::time_point deadline) {
  try {
    return gossip::bootstrap(transport, endpoint, key, request, deadline);
  } catch (const gossip::TimeoutError&) {
    return std::nullopt;
  }
}

// Asks the peer at `seed` (following redirects to the leader) for an id and the live peers;
// nullopt, with `silent` set to why, when no Starling peer answers there. A leader that does
// not answer may have died before `seed` noticed: `seed` is asked again, with back-off, until
// the deadline, by when it names the next leader (the lowest live id) or is the leader itself.
std::optional<gossip::BootstrapReply> ask(gossip::Transport& transport, const Seed& seed,
                                          const gossip::BootstrapRequest& request, Clock::time_point deadline,
                                          std::string& silent) {
  Seed at = seed;
  auto pause = std::chrono::milliseconds(250);
  for (int redirects = 0;; ++redirects) {
    const auto asked = Clock::now();
    const bool first = at.address == seed.address;
    std::optional<gossip::BootstrapReply> reply;
    if (first || leader_listens(at.address))
      reply = answer(transport, at.address, at.key, request, std::min(deadline, asked + kAnswerWithin));
    if (!reply && !first && Clock::now() + pause < deadline) {
      spdlog::warn("join: the swarm's leader at {} does not answer; asking {} again in {} ms", at.address, seed.address,
                   pause.count());
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(4000));
      at = seed;
      redirects = -1;
      continue;
    }
    if (!reply) {
      const int waited = static_cast<int>(std::chrono::duration<double>(Clock::now() - asked).count() + 0.5);
      silent = first ? at.address + " accepts connections but no Starling peer of a running swarm answered within " +
                           std::to_string(waited) + " s (is it a Starling peer started with --listen" +
                           (at.key.empty() ? std::string("?)") : ", and is " + at.key + " the key it logs?)")
                     : "the swarm's leader at " + at.address + " (named by " + seed.address +
                           ") did not answer before the deadline";
      return std::nullopt;
    }
    if (reply->status == gossip::BootstrapStatus::refused)
      throw SwarmJoinError(at.address + " refused the join: " + reply->reason);
    if (reply->status == gossip::BootstrapStatus::accepted) return reply;
    if (redirects >= kMaxRedirects || reply->view.empty())
      throw SwarmJoinError(at.address + " kept redirecting the join; no leader answered");
    const gossip::ViewEntry& leader = reply->view.front();
    spdlog::info("join: {} sends this peer to the swarm's leader, peer {} at {}", at.address, leader.peer, leader.endpoint);
    at = Seed{leader.endpoint, leader.public_key};
  }
}

// The id and the live peers, from the first bootstrap address that answers.
gossip::BootstrapReply bootstrap_from(const std::vector<Seed>& seeds, const HostPort& listen,
                                      const std::optional<HostPort>& advertise, const gossip::CurveKeyPair& keys,
                                      gossip::BootstrapRequest request, double timeout_seconds) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
  std::mt19937 draw(std::random_device{}());
  gossip::TransportContext context(1);
  gossip::TransportOptions o;
  o.self = gossip::kProvisionalIds + std::uniform_int_distribution<gossip::PeerId>(0, 0x0FFFFFFEu - 8)(draw);
  o.bind_endpoint = "tcp://" + listen.host + ":*";  // its own port: the real one binds later
  o.accept_unknown_hello = true;
  o.behind_nat = !advertise;
  if (!keys.public_key.empty()) o.curve = gossip::CurveSecurity{keys, {}, {}, {}, true};
  gossip::Transport transport(context, o);
  const std::string port = transport.endpoint().substr(transport.endpoint().rfind(':'));
  request.endpoint = advertise ? "tcp://" + advertise->host + port : gossip::kBehindNat;
  std::string dead, silent;
  for (const Seed& s : seeds) {
    const HostPort seed = host_port(s.address, "--bootstrap");
    int tries = 0;
    const auto share = Clock::now() + (deadline - Clock::now()) / static_cast<int>(seeds.size());
    if (!await_listener(seed, std::max(share, Clock::now()), tries)) {
      spdlog::warn("join: nothing accepts connections at {}:{} ({} tries)", seed.host, seed.port, tries);
      dead += (dead.empty() ? "" : ", ") + seed.host + ":" + seed.port;
      continue;
    }
    if (std::optional<gossip::BootstrapReply> reply = ask(transport, Seed{tcp(seed), s.key}, request, deadline, silent)) return *reply;
    spdlog::warn("join: {}", silent);
  }
  if (!silent.empty()) throw SwarmJoinError(silent);
  throw SwarmJoinError("no bootstrap address accepts connections (" + dead + "), retried with back-off for " +
                       std::to_string(static_cast<int>(timeout_seconds)) + " s (swarm.join_timeout_seconds)");
}

void check_swarm_config(const Config& config) {
  const gossip::ExchangeSpec& x = config.node.exchange;
  if (x.owner_key.empty())
    throw ConfigError(config.source + ": swarm.owner_key: a swarm peer (--listen) needs the job owner's public key "
                      "(`starling invite --new-owner-key`)");
  if (x.mode == gossip::ExchangeMode::none || x.mode == gossip::ExchangeMode::async_gossip)
    throw ConfigError(config.source + ": exchange.mode: an open swarm runs the synchronous modes (not \"" +
                      gossip::exchange_mode_name(x.mode) + "\")");
  if (config.data.partition.kind != PartitionKind::iid)
    throw ConfigError(config.data.partition_at + ": an open swarm splits the data into swarm.data_parts equal parts "
                      "(\"iid\"); a split by labels needs every peer's labels up front");
  if (config.launch.endpoints != "peers")
    throw ConfigError(config.launch.endpoints_at + ": an open swarm takes its peers from --bootstrap, not an allocation");
}

}  // namespace

void join_swarm(Config& config, const std::string& description, const SwarmPeerOptions& options) {
  check_swarm_config(config);
  if (!config.peers.empty()) spdlog::warn("{}: the [[peer]] list is ignored: a swarm peer learns its peers from the swarm", config.source);
  const HostPort listen = host_port(options.listen, "--listen");
  std::optional<HostPort> advertise;  // none: behind NAT
  if (!options.behind_nat) advertise = options.advertise.empty() ? listen : host_port(options.advertise, "--advertise");
  if (advertise && (advertise->host == "0.0.0.0" || advertise->host == "*"))
    throw ConfigError("--advertise: --listen " + options.listen + " binds every interface; say which address the others dial");
  if (!advertise && options.bootstrap.empty())
    throw ConfigError("--behind-nat: the first peer starts the job, and newcomers must be able to dial it; give --bootstrap");
  gossip::ExchangeSpec& x = config.node.exchange;
  const bool curve = !x.keys_dir.empty();  // security.curve (a swarm makes its own pair, not a roster's)
  std::vector<Seed> seeds;
  for (const std::string& text : options.bootstrap) seeds.push_back(seed_of(text, curve));
  if (curve) x.swarm_keys = gossip::generate_keypair(), x.keys_dir.clear();
  x.swarm = true;
  x.job_description = description;
  x.invitation = read_invitation(options.invitation);
  x.advertise = advertise ? tcp(*advertise) : gossip::kBehindNat;
  std::vector<gossip::ViewEntry> known;
  gossip::PeerId self = 0;
  if (!options.bootstrap.empty()) {
    gossip::BootstrapRequest request{x.invitation, x.job_description, {}};
    gossip::BootstrapReply reply;
    try {
      reply = bootstrap_from(seeds, listen, advertise, x.swarm_keys, request, config.swarm_join_timeout_seconds);
    } catch (const gossip::GossipError& e) {  // cannot bind --listen's host, or a request too long
      throw SwarmJoinError(e.what());
    }
    self = reply.id;
    known = std::move(reply.view);
    x.join = true;
    spdlog::info("join: the swarm admits this peer as peer {}; it knows {} live peer(s)", self, known.size());
  }
  known.push_back({self, tcp(listen), x.swarm_keys.public_key});
  std::sort(known.begin(), known.end(), [](const auto& a, const auto& b) { return a.peer < b.peer; });
  config.peers.clear();
  x.peers.clear();
  for (const gossip::ViewEntry& e : known) {
    config.peers.push_back(PeerEntry{e.peer, e.endpoint, 0, 1, {}, {}});
    x.peers.push_back({e.peer, e.endpoint, {}, e.public_key});
  }
  const auto me = std::find_if(known.begin(), known.end(), [&](const auto& e) { return e.peer == self; });
  x.rank = static_cast<int>(me - known.begin());
  config.node.data_parts = config.swarm_data_parts;
  config.node.data_part = static_cast<int>(self % static_cast<gossip::PeerId>(config.swarm_data_parts));
  if (advertise)  // quoted for a shell: Z85 has no quote of its own
    spdlog::info("swarm: others join with --bootstrap '{}:{}{}'", advertise->host, advertise->port,
                 curve ? "/" + x.swarm_keys.public_key : std::string());
  config.run.name += "-peer" + std::to_string(self);
  if (!config.node.checkpoint_dir.empty()) config.node.checkpoint_dir += "/peer" + std::to_string(self);
}

}  // namespace starling::job
