// PowerSGD by ring all-reduce of its factors (gossip/algorithms/powersgd_allreduce.h).
#include "gossip/algorithms/powersgd_allreduce.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "gossip/transport/error.h"
#include "protocols/codecs/powersgd_codec.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::gossip {

namespace {

namespace codecs = protocols::codecs;

std::size_t near_square_rows(std::size_t n) {
  std::size_t best = 1;
  for (std::size_t d = 1; d * d <= n; ++d)
    if (n % d == 0) best = d;
  return best;
}

double column_dot(const float* p, std::size_t rows, std::size_t rank, std::size_t a, std::size_t b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < rows; ++i) sum += static_cast<double>(p[i * rank + a]) * p[i * rank + b];
  return sum;
}

// Orthonormalizes the columns of p[rows×rank] by Gram–Schmidt run twice ("twice is
// enough"). One pass in fp32 leaves columns that were nearly dependent far from orthogonal,
// and then P̂P̂ᵀ is no projection: it stretches some directions, so error feedback would
// overshoot and could diverge. A column with under 1e-4 of its norm left after the passes
// is taken as dependent and zeroed (its Q column is then zero and gets re-seeded).
void orthonormalize(float* p, std::size_t rows, std::size_t rank) {
  for (std::size_t k = 0; k < rank; ++k) {
    const double before = column_dot(p, rows, rank, k, k);
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t j = 0; j < k; ++j) {
        const auto proj = static_cast<float>(column_dot(p, rows, rank, k, j));
        for (std::size_t i = 0; i < rows; ++i) p[i * rank + k] -= proj * p[i * rank + j];
      }
    const double after = column_dot(p, rows, rank, k, k);
    const float scale = after > 1e-8 * before && after > 1e-30 ? static_cast<float>(1.0 / std::sqrt(after)) : 0.0f;
    for (std::size_t i = 0; i < rows; ++i) p[i * rank + k] *= scale;
  }
}

}  // namespace

PowerSgdAllreduce::PowerSgdAllreduce(Transport& transport, std::vector<PeerId> ring, std::size_t length,
                                     const protocols::CodecOptions& codec_options, PowerSgdAllreduceOptions options)
    : length_(length), seed_key_(static_cast<std::uint32_t>(codec_options.seed ^ (codec_options.seed >> 32))) {
  if (protocols::validate_options(codecs::PowerSgdCodec::kId, codec_options) != protocols::Error::ok)
    STARLING_GOSSIP_THROW(InvalidArgument, "powersgd: rank must lie in 1.." + std::to_string(codecs::PowerSgdCodec::kMaxRank));
  const std::size_t per_segment = std::max<std::size_t>(1, options.segment_bytes / sizeof(float));
  std::size_t p_size = 0, q_size = 0;
  for (std::size_t begin = 0; begin < length_; begin += per_segment) {
    const std::size_t count = std::min(per_segment, length_ - begin);
    const auto chosen_rows = static_cast<std::size_t>(codecs::PowerSgdCodec::kRows.of(codec_options));
    const std::size_t rows = chosen_rows ? chosen_rows : near_square_rows(count);
    if (count % rows != 0)
      STARLING_GOSSIP_THROW(InvalidArgument, "powersgd: rows = " + std::to_string(rows) +
                                                 " does not divide a segment of " + std::to_string(count));
    const std::size_t cols = count / rows;
    const std::size_t rank = std::min<std::size_t>({static_cast<std::size_t>(codecs::PowerSgdCodec::kRank.of(codec_options)), rows, cols});
    blocks_.push_back({begin, rows, cols, rank, p_size, q_size});
    p_size += rows * rank;
    q_size += rank * cols;
  }
  p_.resize(p_size);
  qt_.resize(q_size);
  for (const Block& b : blocks_) seed_columns(b, false);
  AllreduceOptions a;
  a.segment_bytes = options.segment_bytes;
  a.timeout = options.timeout;
  a.round_stride = 2;
  a.first_round = options.first_round;
  p_ring_ = std::make_unique<AllreduceRing>(transport, ring, p_, a);
  a.first_round = options.first_round + 1;
  q_ring_ = std::make_unique<AllreduceRing>(transport, std::move(ring), qt_, a);
}

bool PowerSgdAllreduce::set_warm_start(protocols::Span<const float> qt) {
  if (qt.size() != qt_.size()) return false;
  std::copy(qt.begin(), qt.end(), qt_.begin());
  return true;
}

// Fills a block's Q columns (rows of Qᵀ) with the same pseudo-random values in [-1, 1) on
// every peer; with only_zero, just the columns that are all zero (a round whose input had
// no component along them would otherwise leave them zero for good).
void PowerSgdAllreduce::seed_columns(const Block& b, bool only_zero) {
  for (std::size_t k = 0; k < b.rank; ++k) {
    float* column = qt_.data() + b.q_begin + k * b.cols;
    if (only_zero && std::any_of(column, column + b.cols, [](float v) { return v != 0.0f; })) continue;
    for (std::size_t j = 0; j < b.cols; ++j) {
      const auto index = static_cast<std::uint32_t>(b.q_begin + k * b.cols + j);
      column[j] = static_cast<float>(protocols::simd::qsgd_hash(seed_key_, index) >> 8) * 1.1920929e-7f - 1.0f;
    }
  }
}

void PowerSgdAllreduce::run(protocols::Span<float> m, protocols::Span<float> out) {
  if (m.size() != length_ || out.size() != length_)
    STARLING_GOSSIP_THROW(InvalidArgument, "powersgd all-reduce of a vector of another length");
  for (const Block& b : blocks_)
    codecs::powersgd_project(m.data() + b.begin, b.rows, b.cols, qt_.data() + b.q_begin, b.rank, p_.data() + b.p_begin);
  p_ring_->run();
  for (const Block& b : blocks_) {
    float* p = p_.data() + b.p_begin;
    float* qt = qt_.data() + b.q_begin;
    orthonormalize(p, b.rows, b.rank);
    codecs::powersgd_back_project(m.data() + b.begin, b.rows, b.cols, p, b.rank, qt);
    codecs::powersgd_expand(p, qt, b.rows, b.cols, b.rank, -1.0f, m.data() + b.begin, true);  // residual
  }
  q_ring_->run();
  for (const Block& b : blocks_) {
    codecs::powersgd_expand(p_.data() + b.p_begin, qt_.data() + b.q_begin, b.rows, b.cols, b.rank, 1.0f,
                            out.data() + b.begin, false);
    seed_columns(b, true);
  }
}

std::map<std::string, std::uint64_t> PowerSgdAllreduce::drops() const {
  std::map<std::string, std::uint64_t> all = p_ring_->drops();
  for (const auto& [reason, count] : q_ring_->drops()) all[reason] += count;
  return all;
}

}  // namespace starling::gossip
