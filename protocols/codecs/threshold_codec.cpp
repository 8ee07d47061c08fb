// Threshold (Strom / DL4J) codec (protocols/codecs/threshold_codec.h).
#include "protocols/codecs/threshold_codec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "protocols/byte_io.h"
#include "protocols/codec_row.h"
#include "protocols/codecs/payload.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::protocols::codecs {
namespace {

// Sparse encoding runs in blocks so that the switch to the bitmap is noticed early.
constexpr std::size_t kBlock = 16384;
constexpr std::size_t kHeader = 8;  // τ + count
constexpr float kMinTau = 1e-20f, kMaxTau = 1e20f;

bool wants_bitmap(std::size_t sent, std::size_t n) { return sent * 16 > n; }

constexpr CodecParam kParams[] = {
    {"density", 0.01, 0.0, 1.0, false, false, true, "the fraction of values it steers τ toward (0: τ stays fixed)"},
    {"tau", 1e-4, 1e-12, 1e6, false, false, true, "the starting τ (it then steers toward `density`)"},
    {"clip", 0.0, 0.0, 1e6, false, false, true, "the residual clip at ±clip·τ (0: off)"},
};
constexpr const CodecParam &kDensity = kParams[0], &kTau = kParams[1], &kClip = kParams[2];

}  // namespace

ThresholdCodec::ThresholdCodec(const CodecOptions& options)
    : tau_(static_cast<float>(kTau.of(options))),
      target_(kDensity.of(options)),
      clip_(static_cast<float>(kClip.of(options))) {}

// Sparse entries for [0, pos) until they outgrow n/16; returns how many were written.
std::size_t ThresholdCodec::encode_sparse_prefix(Span<const float> values, Span<float> residual, std::size_t& pos) {
  const std::size_t n = values.size();
  sparse_.resize(n / 16 + kBlock + 16);
  const simd::CodecKernels& k = simd::codec_kernels();
  const float clip = clip_ > 0.0f ? clip_ * tau_ : 0.0f;
  std::size_t count = 0;
  for (pos = 0; pos < n && !wants_bitmap(count, n);) {
    const std::size_t end = std::min(pos + kBlock, n);
    count += k.threshold_sparse(values.data(), residual.data(), pos, end, tau_, clip, sparse_.data() + count);
    pos = end;
  }
  return count;
}

// Rewrites the first sparse_count entries as bitmap codes, then encodes [pos, n) directly.
std::size_t ThresholdCodec::encode_bitmap(Span<const float> values, Span<float> residual, std::size_t pos,
                                          std::size_t sparse_count, std::uint32_t* words) {
  const std::size_t n = values.size();
  std::memset(words, 0, 4 * ((pos + 15) / 16));
  for (std::size_t j = 0; j < sparse_count; ++j) {
    const std::int32_t e = sparse_[j];
    const std::size_t i = static_cast<std::size_t>(std::abs(e)) - 1;
    words[i / 16] |= (e > 0 ? 1u : 2u) << (2 * (i % 16));
  }
  if (pos >= n) return sparse_count;
  const float clip = clip_ > 0.0f ? clip_ * tau_ : 0.0f;
  return sparse_count +
         simd::codec_kernels().threshold_bitmap(values.data(), residual.data(), pos, n, tau_, clip, words);
}

Error ThresholdCodec::encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) {
  if (Error e = check_encode_args(values, residual); e != Error::ok) return e;
  const std::size_t n = values.size();
  std::size_t pos = 0;
  std::size_t count = encode_sparse_prefix(values, residual, pos);
  last_bitmap_ = wants_bitmap(count, n);
  std::uint8_t* body;
  if (last_bitmap_) {
    body = start_payload(out, id(), kBitmap, n, kHeader + 4 * ((n + 15) / 16));
    // The body starts 16 bytes into the vector's allocation, so the words are 4-aligned.
    count = encode_bitmap(values, residual, pos, count, reinterpret_cast<std::uint32_t*>(body + kHeader));
  } else {
    body = start_payload(out, id(), kSparse, n, kHeader + 4 * count);
    std::memcpy(body + kHeader, sparse_.data(), 4 * count);
  }
  store_le<float>(body, tau_);
  store_le<std::uint32_t>(body + 4, static_cast<std::uint32_t>(count));
  last_sent_ = count;
  adapt(count, n);
  return Error::ok;
}

void ThresholdCodec::adapt(std::size_t sent, std::size_t n) {
  if (target_ <= 0.0 || n == 0) return;
  const double ratio = static_cast<double>(sent) / static_cast<double>(n) / target_;
  const double step = std::clamp(std::sqrt(ratio), 1.0 / kMaxStep, kMaxStep);
  tau_ = std::clamp(static_cast<float>(tau_ * step), kMinTau, kMaxTau);
}

Error ThresholdCodec::decode(ByteSpan payload, Span<float> out, Apply apply) const {
  std::uint8_t format = 0;
  ByteSpan body;
  if (Error e = open_payload(payload, id(), out.size(), format, body); e != Error::ok) return e;
  if (format != kSparse && format != kBitmap) return Error::bad_parameter;
  ByteReader reader(body);
  const float tau = reader.read<float>();
  const std::uint32_t count = reader.read<std::uint32_t>();
  if (!reader.ok()) return Error::truncated;
  if (!std::isfinite(tau)) return Error::non_finite;
  if (!(tau > 0.0f)) return Error::bad_parameter;
  if (count > out.size()) return Error::bad_parameter;
  ByteSpan rest = reader.take(reader.remaining());
  return format == kSparse ? decode_sparse(rest, count, tau, out, apply) : decode_bitmap(rest, count, tau, out, apply);
}

Error ThresholdCodec::decode_sparse(ByteSpan entries, std::uint32_t count, float tau, Span<float> out,
                                    Apply apply) const {
  if (entries.size() < 4ull * count) return Error::truncated;
  if (entries.size() > 4ull * count) return Error::oversized;
  const std::int64_t n = static_cast<std::int64_t>(out.size());
  std::int64_t previous = 0;
  for (std::uint32_t j = 0; j < count; ++j) {
    const std::int64_t e = load_le<std::int32_t>(entries.data() + 4 * j);
    const std::int64_t at = e < 0 ? -e : e;
    if (at == 0 || at > n) return Error::index_out_of_range;
    if (at <= previous) return Error::bad_index_order;
    previous = at;
  }
  if (apply == Apply::assign) std::fill(out.begin(), out.end(), 0.0f);
  for (std::uint32_t j = 0; j < count; ++j) {
    const std::int32_t e = load_le<std::int32_t>(entries.data() + 4 * j);
    out[static_cast<std::size_t>(std::abs(e)) - 1] += e > 0 ? tau : -tau;
  }
  return Error::ok;
}

Error ThresholdCodec::decode_bitmap(ByteSpan words, std::uint32_t count, float tau, Span<float> out,
                                    Apply apply) const {
  const std::size_t n = out.size();
  const std::size_t bytes = 4 * ((n + 15) / 16);
  if (words.size() < bytes) return Error::truncated;
  if (words.size() > bytes) return Error::oversized;
  const simd::CodecKernels& k = simd::codec_kernels();
  const std::int64_t codes = k.bitmap_check(words.data(), n);
  if (codes < 0 || codes != static_cast<std::int64_t>(count)) return Error::bad_encoding;
  k.bitmap_decode(words.data(), n, tau, out.data(), apply == Apply::add);
  return Error::ok;
}

namespace {

// About 1 % of N(0, 1) entries reach τ = 2.576 (sparse format), 62 % reach 0.5 (bitmap).
constexpr std::pair<std::string_view, double> kOnePercent[] = {{"tau", 2.576}, {"density", 0.0}};
constexpr std::pair<std::string_view, double> kMost[] = {{"tau", 0.5}, {"density", 0.0}};
constexpr CodecSample kSamples[] = {{"threshold", kOnePercent}, {"threshold-bitmap", kMost}};

}  // namespace

extern constexpr CodecRow threshold_codec_row{
    ThresholdCodec::kId, "threshold", AllreduceRoute::gather, kParams, nullptr,
    [](const CodecOptions& o) -> std::unique_ptr<Codec> { return std::make_unique<ThresholdCodec>(o); },
    [](const CodecOptions& o) {
      std::ostringstream out;
      out << "threshold " << kDensity.of(o) * 100 << "%";
      return out.str();
    },
    kSamples};

}  // namespace starling::protocols::codecs
