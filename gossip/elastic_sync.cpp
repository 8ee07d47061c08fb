// Synchronous exchange over agreed membership views (gossip/elastic_sync.h).
#include "gossip/elastic_sync.h"

#include <algorithm>
#include <thread>

#include "gossip/algorithms/algorithm_table.h"
#include "gossip/control/job_start.h"
#include "gossip/control/join.h"
#include "gossip/control/model_transfer.h"
#include "gossip/transport/error.h"
#include "gossip/transport/ring_common.h"
#include "protocols/codec_row.h"
#include "protocols/state_digest.h"
#include "protocols/state_hash_messages.h"

namespace starling::gossip {

namespace {

// A view change per round is normal; this many in one exchange means the peers cannot settle.
constexpr int kMaxChangesPerRound = 20;

// How long a joiner waits for more members to vouch for the model it took over once the
// first has: members send as they take up the view, fellow joiners never.
constexpr std::chrono::milliseconds kVouchGrace{500};

// Armed for the lifetime of a scope: events abort the receives inside it.
class Armed {
 public:
  explicit Armed(ControlPlane& control) : control_(control) { control_.arm(true); }
  ~Armed() { control_.arm(false); }

 private:
  ControlPlane& control_;
};

void merge(std::map<std::string, std::uint64_t>& into, const std::map<std::string, std::uint64_t>& from) {
  for (const auto& [reason, count] : from) into[reason] += count;
}

void merge(std::map<PeerId, NeighbourStats>& into, const std::map<PeerId, NeighbourStats>& from) {
  for (const auto& [id, stats] : from) into[id].add(stats);
}

std::size_t total_size(const std::vector<protocols::Span<float>>& parts) {
  std::size_t n = 0;
  for (const protocols::Span<float>& part : parts) n += part.size();
  return n;
}

std::string digests_text(const std::map<PeerId, std::uint64_t>& reported) {
  std::string text;
  for (const auto& [peer, digest] : reported)
    text += (text.empty() ? "" : ", ") + std::to_string(peer) + ": " + digest_text(digest);
  return text;
}

// "peer(s) {1: 6 chunks, 2: 5 chunks}"
std::string seeders_text(const Fetched& got) {
  std::string text;
  for (const auto& [peer, chunks] : got.chunks)
    text += (text.empty() ? "" : ", ") + std::to_string(peer) + ": " + std::to_string(chunks) + " chunks";
  return "peer(s) {" + text + "}";
}

}  // namespace

ElasticSync::ElasticSync(Transport& transport, ControlPlane& control, const ExchangeSpec& spec,
                         protocols::Span<float> model)
    : transport_(transport),
      control_(control),
      spec_(spec),
      model_(model),
      agreement_(transport, control),
      view_(control.view()),
      round_(spec.first_round),
      input_(model.size()),
      common_(model.begin(), model.end()),
      deadline_(RoundDeadlineOptions{spec.failure_timeout, spec.timeout}),
      algorithm_spec_(spec) {
  algorithm_spec_.timeout = std::chrono::hours(24 * 365);
  if (spec_.adaptive && spec_.codec != "none") {
    AdaptiveCompressionOptions a = spec_.adaptive_options;
    const protocols::CodecRow* row = protocols::codec_row(spec_.codec);
    if (const auto density = row ? row->value(spec_.codec_options, "density") : std::nullopt) a.initial_density = *density;
    adaptive_ = std::make_unique<AdaptiveCompression>(a);
  }
}

std::size_t ElasticSync::min_peers() const {
  if (spec_.min_peers > 0) return static_cast<std::size_t>(spec_.min_peers);
  if (spec_.swarm) return 1;  // a swarm has no roster to take a majority of
  return spec_.peers.size() / 2 + 1;
}

// The view's members in the config's ring order, then those it does not list (a swarm's
// newcomers) by id: a swarm's peers list theirs by id, so every member draws one ring.
std::vector<PeerId> ElasticSync::ring() const {
  std::vector<PeerId> out;
  for (const PeerAddress& p : spec_.peers)
    if (view_.contains(p.id)) out.push_back(p.id);
  for (PeerId p : view_.members)
    if (std::none_of(spec_.peers.begin(), spec_.peers.end(), [&](const PeerAddress& a) { return a.id == p; }))
      out.push_back(p);
  return out;
}

std::optional<Position> ElasticSync::start(std::uint64_t iteration) {
  std::copy(model_.begin(), model_.end(), common_.begin());
  common_iteration_ = iteration;
  control_.serve(common_, common_iteration_);
  transport_.announce(view_.number, round_);
  const bool fresh = !spec_.join && await_job(transport_, job_start()) == JobState::fresh;
  control_.started();
  if (fresh) {
    // Peers that arrived after their start grace were taken for dead meanwhile and are alive
    // again: taking up view 0 anew raises only what still needs a view change (a member
    // still dead, a view change begun meanwhile, in which the first exchange() takes part).
    control_.set_view(view_);
    build(round_);
    if (spec_.swarm) return await_swarm(iteration);
    return std::nullopt;
  }
  log(spec_.join ? "joining the running job" : "the job is already running: joining it");
  return join(Clock::now() + spec_.timeout);
}

// A member of view 0 that never trained waits for the others while they keep arriving, or
// for a quorum of them once none came for the start timeout (job_start.h); view 0 spans
// the whole ring, so no member can be more rounds ahead than there are peers.
JobStart ElasticSync::job_start() const {
  JobStart job;
  job.peers = control_.watched();
  job.peers.push_back(transport_.self());
  job.round = round_;
  job.reach = spec_.peers.size();
  job.quorum = min_peers();
  job.patience = job.quorum_patience = spec_.start_timeout;
  job.view_change_begun = [this] { return control_.view_change_begun(); };
  job.confirm = 2 * spec_.heartbeat;  // fresh heartbeats, not ones queued for an earlier run
  return job;
}

std::optional<Position> ElasticSync::exchange(std::uint64_t iteration, double compute_seconds) {
  if (view_.members.size() == 1) listen_alone();
  const auto started = Clock::now();
  control_.round_started(round_, deadline_.current());  // waiting for the last round's digests is this round's wait
  check_state();
  std::copy(model_.begin(), model_.end(), input_.begin());
  transport_.announce(view_.number, round_);
  for (int changes = 0;;) {
    if (control_.event_pending()) {
      if (control_.round_timed_out()) deadline_.cut_short();
      if (changes >= kMaxChangesPerRound)
        STARLING_GOSSIP_THROW(TimeoutError, "the view changed " + std::to_string(changes) + " times in round " +
                                                std::to_string(round_) + " without settling");
      Outcome outcome;
      const std::vector<PeerId> before = view_.members;
      try {
        outcome = change_view(iteration);
      } catch (const MembershipChanged&) {
        ++changes;
        continue;  // the model's source died while handing it over: agree again
      }
      // Admitting joiners is progress (each config peer can be admitted only once per time
      // it was left out): a crowd arriving in waves must not exhaust the bound.
      if (!admits(before, view_.members)) ++changes;
      if (outcome == Outcome::moved) {
        control_.round_ended();
        return std::exchange(moved_, std::nullopt);
      }
      if (outcome == Outcome::done) {
        control_.round_ended();
        return std::nullopt;
      }
      control_.round_started(round_, deadline_.current());  // the rerun in the new view
    }
    RoundResult result;
    {
      Armed armed(control_);
      result = algorithm_->run(compute_seconds, iteration);
    }
    if (result.status == RoundResult::done) break;
    restore();
    if (result.status == RoundResult::timed_out)
      control_.raise("round " + std::to_string(round_) + " timed out (" + result.why + ")");
  }
  deadline_.completed(Clock::now() - started);
  return complete_round(iteration);
}

// The first peer of a swarm admits newcomers before round 0 until the view holds
// swarm_start_peers members, or the start timeout passes; the members it admitted meanwhile
// wait in their first round, and take part in each view change.
std::optional<Position> ElasticSync::await_swarm(std::uint64_t iteration) {
  const auto deadline = Clock::now() + spec_.start_timeout;
  std::copy(model_.begin(), model_.end(), input_.begin());
  while (view_.members.size() < spec_.swarm_start_peers && Clock::now() < deadline) {
    if (!control_.event_pending()) {
      transport_.idle();
      if (transport_.try_receive(std::min(deadline, Clock::now() + std::chrono::milliseconds(20))))
        control_.count("before_start");
      continue;
    }
    if (change_view(iteration) == Outcome::moved) return std::exchange(moved_, std::nullopt);
  }
  if (view_.members.size() < spec_.swarm_start_peers)
    log("starting with " + std::to_string(view_.members.size()) + " member(s) of the " +
        std::to_string(spec_.swarm_start_peers) + " swarm.start_peers: the start timeout passed");
  return std::nullopt;
}

// A lone member's round receives nothing, so it looks at what came (newcomers' requests)
// here; nothing of its own view can be in flight.
void ElasticSync::listen_alone() {
  transport_.idle();
  while (transport_.try_receive()) control_.count("while_alone");
}

bool ElasticSync::admits(const std::vector<PeerId>& before, const std::vector<PeerId>& after) {
  return !std::includes(before.begin(), before.end(), after.begin(), after.end());
}

void ElasticSync::restore() { std::copy(input_.begin(), input_.end(), model_.begin()); }

// A run may have covered several rounds (a slow peer's deferred pseudo-gradient): this peer
// then goes on from the job's round and iteration, which it returns.
std::optional<Position> ElasticSync::complete_round(std::uint64_t iteration) {
  const RoundSpan span = algorithm_->span();
  round_ += span.rounds - 1;
  digest_members_ = span.published_by;
  const bool one_state = common_model(spec_.mode);
  if (one_state && spec_.fault_after_round) spec_.fault_after_round(round_, model_, algorithm_->shared_state());
  std::copy(model_.begin(), model_.end(), common_.begin());
  common_iteration_ = span.iteration.value_or(iteration);
  if (one_state) publish_digest();
  ++round_;
  control_.serve(common_, common_iteration_, shared_);
  control_.round_ended();
  transport_.announce(view_.number, round_);
  if (span.rounds == 1 && !span.iteration) return std::nullopt;
  return Position{round_, common_iteration_, true};
}

// The digest of the round's common model and shared state, to every other member.
void ElasticSync::publish_digest() {
  const std::vector<protocols::Span<float>> shared = algorithm_->shared_state();
  shared_.clear();
  for (const protocols::Span<float>& part : shared) shared_.insert(shared_.end(), part.begin(), part.end());
  const std::uint64_t digest = protocols::state_root(common_, shared_);
  control_.state_hashes().record(transport_.self(), view_.number, round_, digest);
  std::vector<std::uint8_t> payload;
  protocols::encode_state_hash({digest, view_.number, common_iteration_}, payload);
  protocols::FrameHeader h;
  h.type = protocols::MessageType::state_hash;
  h.round = round_;
  for (PeerId p : view_.members)
    if (p != transport_.self()) transport_.send(p, h, protocols::ByteSpan(payload.data(), payload.size()));
  digest_round_ = round_;
  state_check_.recent.emplace_back(round_, digest);
  if (state_check_.recent.size() > kRecentDigests) state_check_.recent.pop_front();
  log("state digest after round " + std::to_string(round_) + ": " + digest_text(digest));
}

// Waits for the members' digests of the last round (each sent its own before anything of
// this round), then judges them. A view change pending ends the wait: it settles the state.
void ElasticSync::check_state() {
  if (!digest_round_) return;
  const std::uint64_t round = *std::exchange(digest_round_, std::nullopt);
  StateHashes& hashes = control_.state_hashes();
  const std::vector<PeerId> members = digest_members_.empty() ? view_.members : digest_members_;
  await_digests(Clock::now() + spec_.timeout, [&] {
    return control_.event_pending() || hashes.complete(view_.number, round, members);
  });
  const std::map<PeerId, std::uint64_t> reported = hashes.of(view_.number, round);
  const StateVerdict v = judge(reported, members);
  ++state_check_.rounds_checked;
  if (!v.missing.empty() && !control_.event_pending())
    log("round " + std::to_string(round) + ": no state digest from peer(s) " + describe(v.missing));
  if (v.agreed()) return;
  ++state_check_.disagreements;
  if (!v.majority) {
    warn("state check: after round " + std::to_string(round) + " the members' states differ with no majority (" +
         digests_text(reported) + "): nobody's is replaced");
    return;
  }
  warn("state check: after round " + std::to_string(round) + " peer(s) " + describe(v.differing) +
       " differ from the majority's state " + digest_text(*v.majority) + " (" + digests_text(reported) + ")");
  const auto own = reported.find(transport_.self());
  if (own == reported.end() || own->second == *v.majority) return;
  if (control_.event_pending()) return log("a view change is pending: it settles this peer's state");
  heal(round, *v.majority, reported);
}

// Takes the majority's common model and shared state from its holders, each chunk checked
// against the majority's digest, keeps this peer's own progress since the round, and goes on.
void ElasticSync::heal(std::uint64_t round, std::uint64_t majority, const std::map<PeerId, std::uint64_t>& reported) {
  const std::vector<protocols::Span<float>> shared = algorithm_->shared_state();
  std::vector<float> model(model_.size()), extra(total_size(shared));
  StateSource source{{}, majority, &wrong_seeders_};
  for (const auto& [peer, digest] : reported)
    if (digest == majority && peer != transport_.self() && control_.alive(peer)) source.seeders.push_back(peer);
  Fetched got;
  try {
    got = fetch_state(transport_, control_, source, model, Clock::now() + spec_.timeout, extra);
  } catch (const GossipError& e) {  // every holder lied, died or did not answer in time
    warn("state check: no holder of the majority's state of round " + std::to_string(round) +
         " handed it over (" + e.what() + "): going on with this peer's own");
    return;
  }
  for (const std::string& line : got.caught) warn(line);
  for (std::size_t i = 0; i < model.size(); ++i) {
    const float progress = model_[i] - common_[i];  // zero keeps the majority's bits (−0 too)
    model_[i] = progress != 0.0f ? model[i] + progress : model[i];
  }
  common_ = std::move(model);
  const float* from = extra.data();
  for (const protocols::Span<float>& part : shared) {
    std::copy(from, from + part.size(), part.begin());
    from += part.size();
  }
  shared_ = std::move(extra);
  control_.serve(common_, common_iteration_, shared_);
  ++state_check_.heals;
  warn("state check: took the majority's state of round " + std::to_string(round) + " (" + digest_text(majority) +
       ") from " + seeders_text(got));
}

// Receives until `done` or the deadline, waking at each digest; what else arrives (data of
// the next round from members already in it) is put back for later.
void ElasticSync::await_digests(Clock::time_point deadline, const std::function<bool()>& done) {
  struct Waking {  // the control plane wakes this wait, and no other
    ControlPlane& control;
    explicit Waking(ControlPlane& c) : control(c) { control.wake_on_state_hash(true); }
    ~Waking() { control.wake_on_state_hash(false); }
  } waking(control_);
  std::vector<Message> aside;
  while (!done() && Clock::now() < deadline) {
    std::optional<Message> m = transport_.try_receive(std::min(deadline, Clock::now() + std::chrono::milliseconds(20)));
    if (!m || m->header.type == protocols::MessageType::state_hash) continue;  // recorded already
    if (aside.size() < kMaxEarlyMessages) aside.push_back(std::move(*m));
    else control_.count("set_aside_overflow");
  }
  transport_.put_back(std::move(aside));
}

// Tells the peers `d` admits (members that `before` lacks) the common model's digest alone.
void ElasticSync::vouch(const std::vector<PeerId>& before, const Decision& d) {
  std::vector<PeerId> admitted;
  for (PeerId p : d.view.members)
    if (p != transport_.self() && !std::binary_search(before.begin(), before.end(), p)) admitted.push_back(p);
  if (!common_model(spec_.mode) || d.start_round == 0 || admitted.empty()) return;
  std::vector<std::uint8_t> payload;
  protocols::encode_state_hash({protocols::state_root(common_, {}), d.view.number, common_iteration_}, payload);
  protocols::FrameHeader h;
  h.type = protocols::MessageType::state_hash;
  h.round = d.start_round - 1;
  std::this_thread::sleep_for(spec_.vouch_delay);
  for (PeerId p : admitted) transport_.send(p, h, protocols::ByteSpan(payload.data(), payload.size()));
}

// A joiner's take-over. In the common-model modes the members vouch for the model (each
// sends its digest as it takes up the view, vouch()); it waits for all of them, or
// kVouchGrace after the first (fellow joiners send none), and takes the model whose digest
// most of them vouch for from all that vouch for it (the source first), each chunk checked.
// When every seeder so far served a wrong state, the members whose digests were late are
// waited for (up to the deadline) and asked next. With no digest most vouch for, it takes
// the source's model unchecked.
void ElasticSync::take_over_checked(const Decision& d, Clock::time_point deadline) {
  if (!common_model(spec_.mode) || d.start_round == 0 || d.source == transport_.self()) return take_over(d, deadline);
  std::vector<PeerId> others;
  for (PeerId p : d.view.members)
    if (p != transport_.self()) others.push_back(p);
  StateHashes& hashes = control_.state_hashes();
  const std::uint64_t round = d.start_round - 1;
  // Until every other member vouched, or kVouchGrace after more than `heard` did.
  const auto await_vouches = [&](std::size_t heard) {
    std::optional<Clock::time_point> more;
    await_digests(deadline, [&] {
      if (!more && hashes.of(d.view.number, round).size() > heard) more = Clock::now() + kVouchGrace;
      return hashes.complete(d.view.number, round, others) || (more && Clock::now() >= *more);
    });
  };
  await_vouches(0);
  for (;;) {
    const std::map<PeerId, std::uint64_t> vouched = hashes.of(d.view.number, round);
    const StateVerdict v = judge(vouched, others);
    if (!v.majority) {
      log("no digest most members agree on vouches for the model taken over (" + digests_text(vouched) +
          "): taking peer " + std::to_string(d.source) + "'s unchecked");
      return take_over(d, deadline);
    }
    StateSource source{{}, *v.majority, &wrong_seeders_};
    for (const auto& [peer, digest] : vouched)
      if (digest == *v.majority && peer != transport_.self() && control_.alive(peer)) source.seeders.push_back(peer);
    std::stable_partition(source.seeders.begin(), source.seeders.end(), [&](PeerId p) { return p == d.source; });
    try {
      const Fetched got = fetch_state(transport_, control_, source, model_, deadline);
      for (const std::string& line : got.caught) warn(line);
      return log("took the model of iteration " + std::to_string(got.iteration) + " (" + digest_text(*v.majority) +
                 ") from " + seeders_text(got));
    } catch (const WrongState& e) {
      warn(std::string(e.what()) + ": waiting for the digests of the members not heard yet");
      await_vouches(vouched.size());
      if (hashes.of(d.view.number, round).size() == vouched.size()) throw;
    }
  }
}

void ElasticSync::warn(const std::string& line) const {
  if (spec_.on_warning) spec_.on_warning(line);
  else log(line);
}

ElasticSync::Outcome ElasticSync::change_view(std::uint64_t iteration) {
  restore();
  const std::string why = control_.take_event();
  const auto deadline = Clock::now() + spec_.timeout;
  const Decision d = agreement_.run(view_, Standing{round_, common_iteration_}, deadline);
  ++view_changes_;
  if (!d.view.contains(transport_.self())) {
    log("view " + std::to_string(d.view.number) + " " + describe(d.view.members) +
        " leaves this peer out (it was taken for dead); joining again");
    moved_ = join(deadline);
    return Outcome::moved;
  }
  log("view " + std::to_string(view_.number) + " -> " + std::to_string(d.view.number) + ": members " +
      describe(d.view.members) + ", going on from round " + std::to_string(d.start_round) + " (" + why + ")");
  const std::vector<PeerId> before = view_.members;
  adopt(d);
  if (round_ >= d.start_round) {
    vouch(before, d);
    return Outcome::rerun;
  }
  // The round this peer works on is complete elsewhere: take it over.
  const bool moved = round_ + 1 != d.start_round || iteration != d.iteration;
  if (common_model(spec_.mode) || moved) take_over(d, deadline);
  round_ = d.start_round;
  common_iteration_ = d.iteration;
  std::copy(model_.begin(), model_.end(), common_.begin());
  control_.serve(common_, common_iteration_);
  transport_.announce(view_.number, round_);
  vouch(before, d);
  if (!moved) return Outcome::done;
  moved_ = Position{round_, d.iteration};
  return Outcome::moved;
}

void ElasticSync::adopt(const Decision& d) {
  digest_round_.reset();  // rounds before a view change are settled by it, not judged
  view_ = d.view;
  control_.set_view(view_);
  transport_.announce(view_.number, round_);
  if (view_.members.size() < min_peers())
    STARLING_GOSSIP_THROW(TooFewPeers, "only " + std::to_string(view_.members.size()) + " live peer(s) " +
                                           describe(view_.members) + " left, fewer than exchange.min_peers = " +
                                           std::to_string(min_peers()));
  build(d.start_round);
}

// The source's model after the round before the start round, into the model. A source
// caught serving a wrong state (its chunks differ from its own digests) is passed over for
// the next member that holds the model of the decision's iteration.
void ElasticSync::take_over(const Decision& d, Clock::time_point deadline) {
  if (d.source == transport_.self()) return;
  std::vector<PeerId> seeders{d.source};
  for (PeerId p : d.view.members)
    if (p != d.source && p != transport_.self() && !wrong_seeders_.count(p)) seeders.push_back(p);
  for (std::size_t i = 0; i < seeders.size(); ++i) {
    const StateSource source{{seeders[i]}, std::nullopt, &wrong_seeders_};  // its own chunk digests
    try {
      const std::uint64_t got = fetch_state(transport_, control_, source, model_, deadline).iteration;
      if (got == d.iteration) return;
      if (i == 0) return log("peer " + std::to_string(d.source) + " handed over the model of iteration " +
                             std::to_string(got) + ", not " + std::to_string(d.iteration));
    } catch (const WrongState& e) {
      warn(std::string(e.what()) + (i + 1 < seeders.size() ? ": asking the next member" : ""));
      if (i + 1 == seeders.size()) throw;
    }
  }
  STARLING_GOSSIP_THROW(WrongState, "no member but the wrong source holds the model of iteration " + std::to_string(d.iteration));
}

Position ElasticSync::join(Clock::time_point deadline) {
  protocols::Hello hello;
  hello.parameter_count = model_.size();
  hello.tensor_sizes = spec_.tensor_sizes.empty() ? std::vector<std::uint64_t>{model_.size()} : spec_.tensor_sizes;
  hello.endpoint = spec_.advertise.empty() ? transport_.endpoint() : spec_.advertise;
  auto next_hello = Clock::time_point{};
  for (;;) {
    const auto now = Clock::now();
    if (control_.refused()) STARLING_GOSSIP_THROW(InvalidArgument, "the running peers train a model of another shape");
    if (now >= deadline) STARLING_GOSSIP_THROW(TimeoutError, "no running peer took this one in before the deadline");
    if (now >= next_hello) {
      for (PeerId p : control_.join_contacts())
        if (spec_.swarm) request_swarm_join(transport_, p, spec_.invitation, hello);
        else request_join(transport_, p, hello);
      next_hello = now + std::max(spec_.heartbeat, std::chrono::milliseconds(500));
    }
    while (auto item = control_.next_view_message()) {
      const auto& [from, m] = *item;
      if (m.kind == protocols::ViewKind::prepare)
        agreement_.send_status(from, view_.number, Standing{}, protocols::kViewJoining);
      if (m.kind != protocols::ViewKind::decide || !std::binary_search(m.peers.begin(), m.peers.end(), transport_.self()))
        continue;
      const Decision d = decision_of(m);
      log("joined view " + std::to_string(d.view.number) + " " + describe(d.view.members) + " at round " +
          std::to_string(d.start_round) + ", taking the model of iteration " + std::to_string(d.iteration) +
          " from peer " + std::to_string(d.source));
      adopt(d);
      try {
        take_over_checked(d, deadline);
      } catch (const MembershipChanged&) {
        continue;  // the source died: the members agree again, with this peer among them
      }
      round_ = d.start_round;
      common_iteration_ = d.iteration;
      std::copy(model_.begin(), model_.end(), common_.begin());
      control_.serve(common_, common_iteration_);
      transport_.announce(view_.number, round_);
      return Position{round_, d.iteration};
    }
    if (transport_.try_receive(std::min(deadline, now + std::chrono::milliseconds(20))))
      control_.count("before_joining");
  }
}

std::map<std::string, std::uint64_t> ElasticSync::drops() const {
  std::map<std::string, std::uint64_t> all = drops_;
  if (algorithm_) merge(all, algorithm_->drops());
  return all;
}

std::map<PeerId, NeighbourStats> ElasticSync::neighbour_stats() const {
  std::map<PeerId, NeighbourStats> all = neighbour_stats_;
  if (algorithm_) merge(all, algorithm_->neighbour_stats());
  return all;
}

AlgorithmState ElasticSync::algorithm_state() const {
  AlgorithmState state{ring(), round_, {}};
  if (algorithm_) state.values = algorithm_->state();
  return state;
}

// The view's algorithm, its density where adaptive compression has changed it.
void ElasticSync::build(std::uint64_t start_round) {
  if (algorithm_) merge(drops_, algorithm_->drops());
  if (algorithm_) merge(neighbour_stats_, algorithm_->neighbour_stats());
  algorithm_.reset();
  const std::vector<PeerId> ids = ring();
  const auto self = std::find(ids.begin(), ids.end(), transport_.self());
  SyncSetup setup{transport_, algorithm_spec_, ids, static_cast<int>(self - ids.begin()),
                  tagged_round(view_.number, start_round), model_, spec_.codec_options, adaptive_.get()};
  if (adaptive_ && adaptive_->adjustments() > 0) setup.codec_options.set("density", adaptive_->density());
  algorithm_ = make_sync_algorithm(setup);
  put_back_state(ids, start_round);
}

// A checkpoint's algorithm state fits only the view and round it was taken in: the same
// members, each with its own part of it, continue together.
void ElasticSync::put_back_state(const std::vector<PeerId>& members, std::uint64_t start_round) {
  if (!resumed_) return;
  const AlgorithmState state = std::move(*resumed_);
  resumed_.reset();
  if (state.values.empty()) return;
  if (state.members == members && state.round == start_round && algorithm_->restore(state.values))
    return log("the exchange algorithm goes on with the checkpoint's state (round " + std::to_string(start_round) + ")");
  log("the checkpoint's exchange state (members " + describe(state.members) + ", round " + std::to_string(state.round) +
      ") does not fit members " + describe(members) + " at round " + std::to_string(start_round) +
      ": the algorithm starts afresh");
}

void ElasticSync::finish() {
  if (algorithm_) algorithm_->finish(common_iteration_);  // members still training expect nothing more of it
  check_state();  // the last round's, so that the run ends on one state
  // The watched peers hear it directly, each before the leave that follows (also those held
  // for dead, which may pass the leave on); the others learn it from their death notices.
  const Standing here{round_, common_iteration_};
  const std::vector<PeerId> watched = control_.watched();
  for (PeerId p : watched) agreement_.send_status(p, view_.number, here, protocols::kViewFinished);
  control_.leave();
  // Stay while a watched member may still need the final model (it is still in the last
  // round); the others wait for their own watched members, so the wait spans the view.
  const auto deadline = Clock::now() + spec_.timeout;
  for (;;) {
    bool waiting = false;
    for (PeerId p : watched)
      waiting |= view_.contains(p) && control_.alive(p) && !control_.finished().count(p);
    if (!waiting) return;
    if (Clock::now() >= deadline) return log("finishing without waiting longer for the other members");
    while (auto item = control_.next_view_message())
      if (item->second.kind == protocols::ViewKind::prepare)
        agreement_.send_status(item->first, view_.number, here, protocols::kViewFinished);
    transport_.try_receive(Clock::now() + std::chrono::milliseconds(20));
  }
}

}  // namespace starling::gossip
