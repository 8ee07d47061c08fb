// Model averaging across all peers with a codec (gossip/algorithms/compressed_allreduce.h).
#include "gossip/algorithms/compressed_allreduce.h"

#include <algorithm>
#include <utility>

#include "gossip/algorithms/codec_streams.h"
#include "gossip/algorithms/state_counts.h"
#include "gossip/transport/error.h"
#include "protocols/codec_row.h"

namespace starling::gossip {

CompressedAllreduce::CompressedAllreduce(Transport& transport, std::vector<PeerId> ring, protocols::Span<float> model,
                                         const std::string& codec, const protocols::CodecOptions& codec_options,
                                         CompressedAllreduceOptions options)
    : transport_(transport),
      model_(model),
      codec_name_(codec),
      codec_options_(codec_options),
      base_(model.size()),
      change_(model.size()),
      residual_(model.size(), 0.0f) {
  const protocols::CodecId id = checked_codec_id(codec, codec_options);
  if (id == protocols::CodecId::none)
    STARLING_GOSSIP_THROW(InvalidArgument, "codec 'none' needs no compressed all-reduce: use AllreduceRing");
  AllreduceOptions a;
  a.segment_bytes = options.segment_bytes;
  a.timeout = options.timeout;
  a.first_round = options.first_round;
  first_ = std::make_unique<AllreduceRing>(transport, ring, model, a);
  hash_lanes_.resize(8);
  verdict_.resize(1);
  hash_ring_ = std::make_unique<AllreduceRing>(transport, ring, hash_lanes_, a);
  verdict_ring_ = std::make_unique<AllreduceRing>(transport, ring, verdict_, a);
  a.first_round = options.first_round + 1;
  const protocols::AllreduceRoute route = protocols::codec_row(id)->route;
  if (route == protocols::AllreduceRoute::ring) {
    kind_ = Kind::ring;
    a.wire = id;
    a.wire_options = codec_options;
    a.wire_options.seed = stream_seed(codec_options.seed, transport.self(), 0);
    narrow_ = std::make_unique<AllreduceRing>(transport, std::move(ring), change_, a);
  } else if (route == protocols::AllreduceRoute::low_rank) {
    kind_ = Kind::powersgd;
    powersgd_ = std::make_unique<PowerSgdAllreduce>(transport, std::move(ring), model.size(), codec_options,
                                                    PowerSgdAllreduceOptions{options.segment_bytes, options.timeout, a.first_round});
  } else {
    kind_ = Kind::gather;
    gather_ = std::make_unique<RingAllgather>(transport, std::move(ring), model.size(), id,
                                              RingAllgatherOptions{options.segment_bytes, options.timeout, a.first_round});
    codecs_ = make_codec_streams(codec_name_, codec_options_, transport_.self(), gather_->segments());
    payloads_.resize(gather_->segments());
  }
}

void CompressedAllreduce::run() {
  const std::size_t n = model_.size();
  if (runs_++ == 0) {
    const bool same = same_models_everywhere();
    if (!same) first_->run();
    std::copy(model_.begin(), model_.end(), base_.begin());
    last_sent_ = same ? 0 : n;
    return;
  }
  for (std::size_t i = 0; i < n; ++i) change_[i] = model_[i] - base_[i];
  switch (kind_) {
    case Kind::ring:
      for (std::size_t i = 0; i < n; ++i) change_[i] += residual_[i];
      std::fill(residual_.begin(), residual_.end(), 0.0f);
      narrow_->run(residual_);
      last_sent_ = n;
      break;
    case Kind::powersgd:
      for (std::size_t i = 0; i < n; ++i) residual_[i] += change_[i];
      powersgd_->run(residual_, change_);
      last_sent_ = powersgd_->factor_count();
      break;
    case Kind::gather: run_gather(); break;
  }
  // change_ now holds the same mean on every peer, and base_ the same common model.
  for (std::size_t i = 0; i < n; ++i) model_[i] = base_[i] + change_[i];
  std::copy(model_.begin(), model_.end(), base_.begin());
}

// The model's 64-bit hash as eight byte values, averaged over the peers: a peer whose own
// bytes differ from the mean has another model than some peer (the mean of byte values
// below 256 is exact enough to tell any difference for fewer than 2^15 peers). The mean of
// the peers' verdicts (1: mine equals the mean) is then 1 on every peer, the same bits
// everywhere, exactly when all of them agree.
bool CompressedAllreduce::same_models_everywhere() {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a over the model's bytes
  const auto* bytes = reinterpret_cast<const unsigned char*>(model_.data());
  for (std::size_t i = 0; i < model_.size() * sizeof(float); ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  std::vector<float> mine(8);
  for (int lane = 0; lane < 8; ++lane) mine[lane] = static_cast<float>((hash >> (8 * lane)) & 0xff);
  std::copy(mine.begin(), mine.end(), hash_lanes_.begin());
  hash_ring_->run();
  verdict_[0] = hash_lanes_ == mine ? 1.0f : 0.0f;
  verdict_ring_->run();
  return verdict_[0] == 1.0f;
}

// Encodes Δ_i per segment, gathers every peer's payloads, and sums them all in rank order
// (the same order on every peer, so the same bits) into change_, divided by p.
void CompressedAllreduce::run_gather() {
  last_sent_ = 0;
  for (std::size_t s = 0; s < codecs_.size(); ++s) {
    const std::size_t begin = gather_->segment_begin(s), count = gather_->segment_size(s);
    const protocols::Error e =
        codecs_[s]->encode({change_.data() + begin, count}, {residual_.data() + begin, count}, payloads_[s]);
    if (e != protocols::Error::ok)
      STARLING_GOSSIP_THROW(InvalidArgument, "encode: " + std::string(protocols::to_string(e)));
    last_sent_ += codecs_[s]->last_sent();
  }
  gather_->run(payloads_);
  std::fill(change_.begin(), change_.end(), 0.0f);
  for (int rank = 0; rank < gather_->size(); ++rank)
    for (std::size_t s = 0; s < codecs_.size(); ++s) {
      const protocols::ByteSpan payload =
          rank == gather_->rank() ? protocols::ByteSpan(payloads_[s].data(), payloads_[s].size()) : gather_->received(rank, s);
      const std::size_t begin = gather_->segment_begin(s), count = gather_->segment_size(s);
      // The others' payloads were checked on arrival; only this peer's own can fail here.
      const protocols::Error e = codecs_[s]->decode(payload, {change_.data() + begin, count}, protocols::Apply::add);
      if (e != protocols::Error::ok)
        STARLING_GOSSIP_THROW(InvalidArgument, "codec cannot decode its own payload: " + std::string(protocols::to_string(e)));
    }
  const float p = static_cast<float>(gather_->size());
  for (float& v : change_) v /= p;
}

void CompressedAllreduce::rebase() { std::copy(model_.begin(), model_.end(), base_.begin()); }

std::vector<float> CompressedAllreduce::state() const {
  if (runs_ == 0) return {};
  std::vector<float> values(residual_.begin(), residual_.end());
  if (powersgd_) values.insert(values.end(), powersgd_->warm_start().begin(), powersgd_->warm_start().end());
  for (std::uint64_t d : draws()) append_count(values, d);
  return values;
}

// The residual, then powersgd's warm start or the streams' draws: all of it, or (as
// checkpoints kept before the rest) the residual alone.
bool CompressedAllreduce::resume(protocols::Span<const float> base, protocols::Span<const float> state) {
  const std::size_t n = residual_.size();
  std::vector<std::uint64_t> streams = draws();
  const std::size_t warm = powersgd_ ? powersgd_->warm_start().size() : 0;
  const bool whole = state.size() == n + warm + kFloatsPerCount * streams.size();
  if (base.size() != n || (state.size() != n && !whole)) return false;
  for (std::size_t s = 0; whole && s < streams.size(); ++s)
    if (!read_count(state.data() + n + warm + kFloatsPerCount * s, streams[s])) return false;
  if (whole && powersgd_) powersgd_->set_warm_start({state.data() + n, warm});
  std::copy(state.begin(), state.begin() + static_cast<long>(n), residual_.begin());
  std::copy(base.begin(), base.end(), base_.begin());
  if (whole) set_draws(streams);
  runs_ = std::max<std::uint64_t>(runs_, 1);
  return true;
}

std::vector<std::uint64_t> CompressedAllreduce::draws() const {
  std::vector<std::uint64_t> out;
  if (narrow_) out.push_back(narrow_->wire_draws());
  for (const auto& codec : codecs_) out.push_back(codec->draws());
  return out;
}

void CompressedAllreduce::set_draws(const std::vector<std::uint64_t>& draws) {
  if (narrow_) narrow_->set_wire_draws(draws[0]);
  for (std::size_t s = 0; s < codecs_.size(); ++s) codecs_[s]->set_draws(draws[s]);
}

void CompressedAllreduce::set_density(double density) {
  if (!(density > 0.0 && density <= 1.0)) STARLING_GOSSIP_THROW(InvalidArgument, "density must lie in (0, 1]");
  codec_options_.set("density", density);
  if (kind_ == Kind::gather) codecs_ = make_codec_streams(codec_name_, codec_options_, transport_.self(), codecs_.size());
}

std::map<std::string, std::uint64_t> CompressedAllreduce::drops() const {
  std::map<std::string, std::uint64_t> all = first_->drops();
  for (const auto* check : {hash_ring_.get(), verdict_ring_.get()})
    for (const auto& [reason, count] : check->drops()) all[reason] += count;
  std::map<std::string, std::uint64_t> more;
  if (narrow_) more = narrow_->drops();
  if (powersgd_) more = powersgd_->drops();
  if (gather_) more = gather_->drops();
  for (const auto& [reason, count] : more) all[reason] += count;
  return all;
}

}  // namespace starling::gossip
