// PowerSGD codec and its linear-algebra steps (protocols/codecs/powersgd_codec.h).
#include "protocols/codecs/powersgd_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "protocols/byte_io.h"
#include "protocols/codecs/payload.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::protocols::codecs {
namespace {

// Eight partial sums let the compiler vectorize without reassociation flags.
float dot(const float* a, const float* b, std::size_t n) {
  float part[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) part[l] += a[i + l] * b[i + l];
  float s = 0.0f;
  for (; i < n; ++i) s += a[i] * b[i];
  for (float x : part) s += x;
  return s;
}

void axpy(float alpha, const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

std::size_t near_square_rows(std::size_t n) {
  std::size_t best = 1;
  for (std::size_t d = 1; d * d <= n; ++d)
    if (n % d == 0) best = d;
  return best;
}

// Finite factors can still overflow when multiplied out; bound |P·Qᵀ| by rank·max|P|·max|Q|.
bool expansion_is_finite(const std::vector<float>& factors, std::size_t p_size, std::size_t rank) {
  double max_p = 0.0, max_q = 0.0;
  for (std::size_t i = 0; i < factors.size(); ++i) {
    double& m = i < p_size ? max_p : max_q;
    m = std::max(m, static_cast<double>(std::fabs(factors[i])));
  }
  return static_cast<double>(rank) * max_p * max_q < 1e37;
}

}  // namespace

void powersgd_project(const float* m, std::size_t rows, std::size_t cols, const float* qt, std::size_t rank, float* p) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < rank; ++k) p[i * rank + k] = dot(m + i * cols, qt + k * cols, cols);
}

void powersgd_orthonormalize(float* p, std::size_t rows, std::size_t rank) {
  for (std::size_t k = 0; k < rank; ++k) {
    for (std::size_t j = 0; j < k; ++j) {
      double proj = 0.0;
      for (std::size_t i = 0; i < rows; ++i) proj += static_cast<double>(p[i * rank + k]) * p[i * rank + j];
      for (std::size_t i = 0; i < rows; ++i) p[i * rank + k] -= static_cast<float>(proj) * p[i * rank + j];
    }
    double norm = 0.0;
    for (std::size_t i = 0; i < rows; ++i) norm += static_cast<double>(p[i * rank + k]) * p[i * rank + k];
    const float inv = norm > 1e-30 ? static_cast<float>(1.0 / std::sqrt(norm)) : 0.0f;
    for (std::size_t i = 0; i < rows; ++i) p[i * rank + k] *= inv;
  }
}

void powersgd_back_project(const float* m, std::size_t rows, std::size_t cols, const float* p, std::size_t rank,
                           float* qt) {
  std::fill(qt, qt + rank * cols, 0.0f);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < rank; ++k) axpy(p[i * rank + k], m + i * cols, qt + k * cols, cols);
}

void powersgd_expand(const float* p, const float* qt, std::size_t rows, std::size_t cols, std::size_t rank,
                     float sign, float* out, bool add) {
  for (std::size_t i = 0; i < rows; ++i) {
    float* row = out + i * cols;
    if (!add) std::fill(row, row + cols, 0.0f);
    for (std::size_t k = 0; k < rank; ++k) axpy(sign * p[i * rank + k], qt + k * cols, row, cols);
  }
}

PowerSgdCodec::PowerSgdCodec(const CodecOptions& options)
    : rank_(static_cast<std::uint32_t>(kRank.of(options))),
      rows_(static_cast<std::uint32_t>(kRows.of(options))),
      seed_(options.seed) {}

// The same pseudo-random Q on every peer with the same seed, in [-1, 1).
void PowerSgdCodec::warm_start(std::size_t cols, std::size_t rank) {
  if (qt_.size() == cols * rank) return;
  qt_.resize(cols * rank);
  const auto key = static_cast<std::uint32_t>(seed_ ^ (seed_ >> 32));
  for (std::size_t i = 0; i < qt_.size(); ++i)
    qt_[i] = static_cast<float>(simd::qsgd_hash(key, static_cast<std::uint32_t>(i)) >> 8) * 1.1920929e-7f - 1.0f;
}

Error PowerSgdCodec::encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) {
  if (Error e = check_encode_args(values, residual); e != Error::ok) return e;
  const std::size_t n = values.size();
  if (rows_ != 0 && (n % rows_ != 0)) return Error::invalid_option;
  const std::size_t rows = n == 0 ? 0 : (rows_ ? rows_ : near_square_rows(n));
  const std::size_t cols = rows == 0 ? 0 : n / rows;
  const std::size_t rank = std::min<std::size_t>({rank_, rows, cols});
  for (std::size_t i = 0; i < n; ++i) residual[i] += values[i];  // residual is now M
  warm_start(cols, rank);
  p_.resize(rows * rank);
  powersgd_project(residual.data(), rows, cols, qt_.data(), rank, p_.data());
  powersgd_orthonormalize(p_.data(), rows, rank);
  powersgd_back_project(residual.data(), rows, cols, p_.data(), rank, qt_.data());
  powersgd_expand(p_.data(), qt_.data(), rows, cols, rank, -1.0f, residual.data(), true);
  std::uint8_t* body = start_payload(out, id(), 0, n, 12 + 4 * rank * (rows + cols));
  store_le<std::uint32_t>(body, static_cast<std::uint32_t>(rows));
  store_le<std::uint32_t>(body + 4, static_cast<std::uint32_t>(cols));
  store_le<std::uint32_t>(body + 8, static_cast<std::uint32_t>(rank));
  std::memcpy(body + 12, p_.data(), 4 * p_.size());
  std::memcpy(body + 12 + 4 * p_.size(), qt_.data(), 4 * qt_.size());
  last_sent_ = rank * (rows + cols);
  return Error::ok;
}

Error PowerSgdCodec::decode(ByteSpan payload, Span<float> out, Apply apply) const {
  std::uint8_t format = 0;
  ByteSpan body;
  if (Error e = open_payload(payload, id(), out.size(), format, body); e != Error::ok) return e;
  if (format != 0) return Error::bad_parameter;
  ByteReader reader(body);
  const std::uint64_t rows = reader.read<std::uint32_t>(), cols = reader.read<std::uint32_t>();
  const std::uint64_t rank = reader.read<std::uint32_t>();
  if (!reader.ok()) return Error::truncated;
  if (rows * cols != out.size()) return Error::bad_parameter;
  if (out.size() > 0 && (rank == 0 || rank > std::min<std::uint64_t>({rows, cols, kMaxRank}))) return Error::bad_parameter;
  if (out.size() == 0 && (rank != 0 || rows != 0 || cols != 0)) return Error::bad_parameter;
  const std::uint64_t floats = rank * (rows + cols);
  if (reader.remaining() < 4 * floats) return Error::truncated;
  if (reader.remaining() > 4 * floats) return Error::oversized;
  const std::uint8_t* data = body.data() + 12;
  if (!simd::codec_kernels().f32_finite(data, floats)) return Error::non_finite;
  std::vector<float> factors(floats);
  std::memcpy(factors.data(), data, 4 * floats);
  if (!expansion_is_finite(factors, rows * rank, rank)) return Error::non_finite;
  powersgd_expand(factors.data(), factors.data() + rows * rank, rows, cols, rank, 1.0f, out.data(),
                  apply == Apply::add);
  return Error::ok;
}


namespace {

constexpr CodecParam kParams[] = {PowerSgdCodec::kRank, PowerSgdCodec::kRows};
constexpr std::pair<std::string_view, double> kRankFour[] = {{"rank", 4}};
constexpr CodecSample kSamples[] = {{"powersgd", {}}, {"powersgd4", kRankFour}};

}  // namespace

extern constexpr CodecRow powersgd_codec_row{
    PowerSgdCodec::kId, "powersgd", AllreduceRoute::low_rank, kParams, nullptr,
    [](const CodecOptions& o) -> std::unique_ptr<Codec> { return std::make_unique<PowerSgdCodec>(o); },
    [](const CodecOptions& o) { return "powersgd rank " + std::to_string(static_cast<int>(PowerSgdCodec::kRank.of(o))); },
    kSamples};

}  // namespace starling::protocols::codecs
