// State hand-over between peers, in checked chunks (gossip/control/model_transfer.h).
#include "gossip/control/model_transfer.h"

#include <algorithm>
#include <deque>

#include "gossip/control/control_plane.h"
#include "gossip/control/state_hashes.h"
#include "gossip/transport/error.h"
#include "gossip/transport/ring_common.h"
#include "protocols/byte_io.h"
#include "protocols/state_digest.h"

namespace starling::gossip {

using Clock = Transport::Clock;
using protocols::ChunkLayout;
using protocols::StateManifest;

namespace {

void send_request(Transport& transport, PeerId to, const protocols::StateRequest& request) {
  std::vector<std::uint8_t> payload;
  protocols::encode_state_request(request, payload);
  protocols::FrameHeader h;
  h.type = protocols::MessageType::state_request;
  transport.send(to, h, protocols::ByteSpan(payload.data(), payload.size()));
}

std::string peers_text(const std::vector<PeerId>& peers) {
  std::string text;
  for (PeerId p : peers) text += (text.empty() ? "" : ", ") + std::to_string(p);
  return "{" + text + "}";
}

// One taker's fetch of one state.
class Fetch {
 public:
  Fetch(Transport& transport, ControlPlane& control, const StateSource& source, protocols::Span<float> model,
        protocols::Span<float> shared, Clock::time_point deadline)
      : transport_(transport),
        control_(control),
        source_(source),
        model_(model),
        shared_(shared),
        deadline_(deadline),
        layout_(protocols::chunk_layout(model.size(), shared.size())),
        chunks_(layout_.count()) {
    for (PeerId p : source_.seeders)
      if (!status_.count(p)) order_.push_back(p), status_[p] = wrong(p) ? Status::caught_before : Status::usable;
    for (std::size_t i = 0; i < chunks_.size(); ++i) pending_.push_back(i);
  }

  Fetched run() {
    struct Taking {  // the control plane passes answers on while this fetch runs
      ControlPlane& control;
      explicit Taking(ControlPlane& c) : control(c) { control.taking_state(true); }
      ~Taking() { control.taking_state(false); }
    } taking(control_);
    std::vector<Message> aside;
    while (!manifest_ || done_ < chunks_.size()) {
      const auto now = Clock::now();
      if (now >= deadline_)
        STARLING_GOSSIP_THROW(TimeoutError, "the state from peer(s) " + peers_text(order_) + " was not complete before the deadline (" +
                                                std::to_string(done_) + " of " + std::to_string(chunks_.size()) + " chunks)");
      for (PeerId p : order_)
        if (status_[p] == Status::usable && !control_.alive(p)) leave_out(p, "died");
      if (usable().empty()) fail();
      ask(now);
      std::optional<Message> m = transport_.try_receive(std::min(deadline_, now + std::chrono::milliseconds(50)));
      if (!m) continue;
      const auto type = m->header.type;
      if (type != protocols::MessageType::state_manifest && type != protocols::MessageType::state_transfer) {
        if (aside.size() < kMaxEarlyMessages) aside.push_back(std::move(*m));
        else control_.count("set_aside_overflow");
        continue;
      }
      const auto it = status_.find(m->from);
      if (it == status_.end() || it->second != Status::usable) continue;  // late answers of one left out
      if (type == protocols::MessageType::state_manifest) on_manifest(*m);
      else on_chunk(*m);
    }
    transport_.put_back(std::move(aside));
    fetched_.iteration = iteration_;
    return fetched_;
  }

 private:
  enum class Status { usable, caught, caught_before, gone };
  struct Chunk {
    bool done = false;
    std::optional<PeerId> asked;  // of whom, while a request is open
    Clock::time_point at{};
  };

  bool wrong(PeerId p) const { return source_.wrong && source_.wrong->count(p); }
  bool verified() const { return source_.root.has_value(); }

  std::vector<PeerId> usable() const {
    std::vector<PeerId> out;
    for (PeerId p : order_)
      if (status_.at(p) == Status::usable) out.push_back(p);
    return out;
  }

  // Without an agreed digest: the digests and every chunk of one moment's state, from the
  // first seeder, again while incomplete. With one: the digests from one seeder (the next
  // one while unanswered), then chunks from all.
  void ask(Clock::time_point now) {
    const std::vector<PeerId> open = usable();
    if (!verified() || !manifest_) {
      if (now - asked_digests_ < kRequestAgainAfter) return;
      const PeerId to = verified() ? open[next_digests_++ % open.size()] : open.front();
      send_request(transport_, to, {true, !shared_.empty(), 0, verified() ? 0u : static_cast<std::uint32_t>(chunks_.size())});
      asked_digests_ = now;
      return;
    }
    for (std::size_t i = 0; i < chunks_.size(); ++i)  // unanswered too long: back in the queue
      if (chunks_[i].asked && now - chunks_[i].at >= kRequestAgainAfter) release(i);
    for (bool gave = true; gave;) {
      gave = false;
      for (PeerId p : open) {
        if (in_flight_[p] >= kChunksInFlight) continue;
        const std::optional<std::size_t> i = next_pending();
        if (!i) return;
        chunks_[*i].asked = p, chunks_[*i].at = now, ++in_flight_[p], gave = true;
        send_request(transport_, p, {false, !shared_.empty(), *i, 1});
      }
    }
  }

  std::optional<std::size_t> next_pending() {
    while (!pending_.empty()) {
      const std::size_t i = pending_.front();
      pending_.pop_front();
      if (!chunks_[i].done && !chunks_[i].asked) return i;
    }
    return std::nullopt;
  }

  void release(std::size_t i) {
    if (!chunks_[i].asked) return;
    --in_flight_[*chunks_[i].asked];
    chunks_[i].asked.reset();
    if (!chunks_[i].done) pending_.push_front(i);
  }

  void on_manifest(const Message& m) {
    protocols::Result<StateManifest> got = protocols::decode_state_manifest(m.bytes());
    if (!got) {
      control_.count("state_manifest_" + std::string(protocols::to_string(got.error())));
      return catch_seeder(m.from, "sent chunk digests that do not decode (" + std::string(protocols::to_string(got.error())) + ")");
    }
    if (!(got->layout == layout_)) return leave_out(m.from, "serves a state of other lengths");
    if (verified()) {
      if (manifest_) return;
      if (got->root() != *source_.root)
        return catch_seeder(m.from, "sent chunk digests of root " + digest_text(got->root()) + ", not the agreed " +
                                        digest_text(*source_.root));
    } else if (manifest_ && iteration_ == m.header.round) {
      return;
    } else {  // a newer state of the one seeder: what came of the older one does not count
      for (Chunk& c : chunks_) c.done = false;
      done_ = 0;
    }
    manifest_ = std::move(*got);
    iteration_ = m.header.round;
  }

  void on_chunk(const Message& m) {
    if (!manifest_) return;  // of a request before the digests came
    if (m.header.round != iteration_) {
      if (verified()) leave_out(m.from, "moved on to the state of iteration " + std::to_string(m.header.round));
      return;
    }
    const bool shared = m.bytes().size() >= 4 && protocols::load_le<std::uint32_t>(m.bytes().data()) ==
                                                     static_cast<std::uint32_t>(protocols::StateSection::optimizer);
    const std::optional<std::size_t> i = layout_.index_of(shared, m.header.tensor_offset);
    if (!i || m.header.tensor_length != layout_.place(*i).length)
      return catch_seeder(m.from, "sent a chunk that is none of the state's");
    if (chunks_[*i].done) return;  // asked twice, answered twice
    protocols::Span<float> section = shared ? shared_ : model_;
    protocols::Result<protocols::StateChunk> chunk = protocols::decode_state_chunk(m.header, m.bytes(), section);
    if (!chunk) {
      control_.count(std::string(protocols::to_string(chunk.error())));
      return catch_seeder(m.from, "sent chunk " + std::to_string(*i) + " that does not decode (" +
                                      std::string(protocols::to_string(chunk.error())) + ")");
    }
    const std::uint64_t digest = protocols::digest_of(section.subspan(chunk->offset, chunk->length));
    if (digest != manifest_->digests[*i])
      return catch_seeder(m.from, "served chunk " + std::to_string(*i) + " of digest " + digest_text(digest) + ", not " +
                                      digest_text(manifest_->digests[*i]));
    chunks_[*i].done = true;
    ++done_;
    ++fetched_.chunks[m.from];
    release(*i);
  }

  void catch_seeder(PeerId p, const std::string& why) {
    control_.count("wrong_state_served");
    if (source_.wrong) source_.wrong->insert(p);
    fetched_.caught.push_back("peer " + std::to_string(p) + " " + why + ": it is not asked again");
    drop(p, Status::caught);
  }

  void leave_out(PeerId p, const std::string& why) {
    control_.log("state hand-over: peer " + std::to_string(p) + " " + why + ": asking the others");
    drop(p, Status::gone);
  }

  void drop(PeerId p, Status why) {
    status_[p] = why;
    if (!manifest_) asked_digests_ = {};  // ask the next seeder for the digests at once
    for (std::size_t i = 0; i < chunks_.size(); ++i)
      if (chunks_[i].asked == p) release(i);
  }

  [[noreturn]] void fail() {
    std::string caught;
    for (const std::string& line : fetched_.caught) caught += "; " + line;
    std::vector<PeerId> before;
    for (PeerId p : order_)
      if (status_[p] == Status::caught_before) before.push_back(p);
    if (!before.empty()) caught += "; peer(s) " + peers_text(before) + " served a wrong state before";
    if (!caught.empty())
      STARLING_GOSSIP_THROW(WrongState, "no seeder handed over the state" +
                                            (verified() ? " of digest " + digest_text(*source_.root) : std::string()) +
                                            caught);
    STARLING_GOSSIP_THROW(MembershipChanged, "every seeder of the state " + peers_text(order_) + " died or moved on");
  }

  Transport& transport_;
  ControlPlane& control_;
  const StateSource& source_;
  protocols::Span<float> model_, shared_;
  Clock::time_point deadline_;
  ChunkLayout layout_;
  std::vector<PeerId> order_;
  std::map<PeerId, Status> status_;
  std::map<PeerId, std::size_t> in_flight_;
  std::optional<StateManifest> manifest_;
  std::uint64_t iteration_ = 0;
  std::vector<Chunk> chunks_;
  std::deque<std::size_t> pending_;  // chunks to ask for (some may be done or asked meanwhile)
  std::size_t done_ = 0;
  Clock::time_point asked_digests_{};
  std::size_t next_digests_ = 0;
  Fetched fetched_;
};

}  // namespace

Fetched fetch_state(Transport& transport, ControlPlane& control, const StateSource& source, protocols::Span<float> model,
                    Clock::time_point deadline, protocols::Span<float> shared) {
  return Fetch(transport, control, source, model, shared, deadline).run();
}

protocols::Error answer_state_request(Transport& transport, PeerId to, const protocols::StateRequest& request,
                                      protocols::Span<const float> model, protocols::Span<const float> shared_state,
                                      std::uint64_t iteration, const std::function<void(std::vector<float>&)>& fault) {
  const protocols::Span<const float> shared = request.shared ? shared_state : protocols::Span<const float>{};
  const ChunkLayout layout = protocols::chunk_layout(model.size(), shared.size());
  if (request.first > layout.count() || request.count > layout.count() - request.first)
    return protocols::Error::index_out_of_range;
  std::vector<std::uint8_t> header, payload;
  if (request.digests) {
    protocols::encode_state_manifest(protocols::state_manifest(model, shared), payload);
    protocols::FrameHeader h;
    h.type = protocols::MessageType::state_manifest;
    h.round = iteration;
    transport.send(to, h, protocols::ByteSpan(payload.data(), payload.size()));
  }
  std::vector<float> faulty;  // tests only: the section with the fault in the chunk sent
  for (std::uint64_t i = request.first; i < request.first + request.count; ++i) {
    const ChunkLayout::Place p = layout.place(static_cast<std::size_t>(i));
    protocols::Span<const float> section = p.shared ? shared : model;
    if (fault) {
      faulty.assign(section.begin(), section.end());
      std::vector<float> part(faulty.begin() + p.offset, faulty.begin() + p.offset + p.length);
      fault(part);
      std::copy(part.begin(), part.end(), faulty.begin() + p.offset);
      section = faulty;
    }
    protocols::StateChunk chunk;
    chunk.round = iteration;
    chunk.section = p.shared ? protocols::StateSection::optimizer : protocols::StateSection::parameters;
    chunk.offset = p.offset;
    chunk.length = p.length;
    chunk.last = p.offset + p.length == section.size();
    if (protocols::Error e = protocols::encode_state_chunk(chunk, section, header, payload); e != protocols::Error::ok)
      return e;
    protocols::Result<protocols::FrameHeader> h = protocols::decode_header({header.data(), header.size()});
    transport.send(to, *h, protocols::ByteSpan(payload.data(), payload.size()));
  }
  return protocols::Error::ok;
}

}  // namespace starling::gossip
