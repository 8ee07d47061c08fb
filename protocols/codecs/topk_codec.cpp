// Sampled-threshold top-k codec (protocols/codecs/topk_codec.h).
#include "protocols/codecs/topk_codec.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <sstream>

#include "protocols/byte_io.h"
#include "protocols/codec_row.h"
#include "protocols/codecs/payload.h"
#include "protocols/simd/codec_kernels.h"

namespace starling::protocols::codecs {
namespace {

constexpr std::size_t kBlock = 16384;
constexpr std::size_t kExactBelow = 32768;  // small tensors: exact selection is cheap
constexpr std::size_t kMinSample = 4096;
constexpr double kOvershoot = 1.25;  // aim the estimate above k so trimming, not luck, sets k

constexpr CodecParam kParams[] = {
    {"density", 0.01, 0.0, 1.0, false, true, true, "the fraction of values sent"},
    {"value_bits", 32, 2, 32, true, false, true,
     "bits per value sent, 32 (exact) or 2 (sign and one of two magnitudes, as SparseLoCo)"},
};
constexpr const CodecParam &kDensity = kParams[0], &kValueBits = kParams[1];

float kth_largest(std::vector<float>& mags, std::size_t k) {
  auto nth = mags.begin() + static_cast<std::ptrdiff_t>(k - 1);
  std::nth_element(mags.begin(), nth, mags.end(), std::greater<float>());
  return *nth;
}

// Format 2's magnitudes and codes at the checked indices; out untouched on an error.
Error decode_two_bit(const std::uint8_t* idx, const std::uint8_t* body, std::uint32_t count, Span<float> out, Apply apply) {
  const float magnitude[2] = {load_le<float>(body), load_le<float>(body + 4)};
  for (float m : magnitude)
    if (Error e = check_scale(m); e != Error::ok) return e;
  const std::uint8_t* codes = body + 8;
  if (count % 4 != 0 && (codes[count / 4] >> (2 * (count % 4))) != 0) return Error::bad_encoding;
  if (apply == Apply::assign) std::fill(out.begin(), out.end(), 0.0f);
  for (std::uint32_t j = 0; j < count; ++j) {
    const unsigned code = (codes[j / 4] >> (2 * (j % 4))) & 3u;
    out[load_le<std::uint32_t>(idx + 4ull * j)] += (code & 1u ? -1.0f : 1.0f) * magnitude[code >> 1];
  }
  return Error::ok;
}

}  // namespace

TopKCodec::TopKCodec(const CodecOptions& options)
    : density_(kDensity.of(options)), value_bits_(static_cast<int>(kValueBits.of(options))), rng_(options.seed | 1u) {}

std::uint64_t TopKCodec::next_random() {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return rng_;
}

float TopKCodec::estimate_cutoff(Span<const float> values, Span<const float> residual, std::size_t k) {
  const std::size_t n = values.size();
  if (n <= kExactBelow) {
    scratch_.resize(n);
    for (std::size_t i = 0; i < n; ++i) scratch_[i] = std::fabs(values[i] + residual[i]);
    return kth_largest(scratch_, k);
  }
  const double want = std::min(1.0, kOvershoot * static_cast<double>(k) / static_cast<double>(n));
  const std::size_t samples = std::min(n / 4, std::max(kMinSample, static_cast<std::size_t>(64.0 / want)));
  scratch_.resize(samples);
  for (float& s : scratch_) {
    const std::size_t i = static_cast<std::size_t>(((next_random() >> 32) * n) >> 32);
    s = std::fabs(values[i] + residual[i]);
  }
  const std::size_t rank = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(want * samples)));
  return kth_largest(scratch_, rank);
}

std::size_t TopKCodec::select(Span<const float> values, Span<float> residual, float cutoff) {
  const simd::CodecKernels& k = simd::codec_kernels();
  const std::size_t n = values.size();
  std::size_t count = 0;
  for (std::size_t pos = 0; pos < n; pos += kBlock) {
    if (idx_.size() < count + kBlock + 16) {
      idx_.resize(2 * (count + kBlock + 16));
      val_.resize(idx_.size());
    }
    const std::size_t end = std::min(pos + kBlock, n);
    count += k.select_abs_ge(values.data(), residual.data(), pos, end, cutoff, idx_.data() + count, val_.data() + count);
  }
  return count;
}

// Keeps the k largest candidates in index order; the others go back into the residual.
std::size_t TopKCodec::trim(std::size_t count, std::size_t k, Span<float> residual) {
  scratch_.resize(count);
  for (std::size_t j = 0; j < count; ++j) scratch_[j] = std::fabs(val_[j]);
  const float kth = kth_largest(scratch_, k);
  std::size_t greater = 0;
  for (std::size_t j = 0; j < count; ++j) greater += std::fabs(val_[j]) > kth;
  std::size_t ties = k - greater, kept = 0;
  for (std::size_t j = 0; j < count; ++j) {
    const float m = std::fabs(val_[j]);
    const bool keep = m > kth || (m == kth && ties > 0);
    if (m == kth && keep) --ties;
    if (keep) {
      idx_[kept] = idx_[j];
      val_[kept++] = val_[j];
    } else {
      residual[idx_[j]] = val_[j];
    }
  }
  return kept;
}

Error TopKCodec::encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) {
  if (Error e = check_encode_args(values, residual); e != Error::ok) return e;
  const std::size_t n = values.size();
  std::size_t count = 0;
  if (n > 0) {
    const std::size_t k = std::min(n, static_cast<std::size_t>(std::ceil(density_ * static_cast<double>(n))));
    const float cutoff = std::max(estimate_cutoff(values, residual, std::max<std::size_t>(k, 1)), FLT_MIN);
    count = select(values, residual, cutoff);
    if (count > k) count = trim(count, k, residual);
  }
  const bool two_bit = value_bits_ == 2;
  std::uint8_t* body = start_payload(out, id(), two_bit ? 2 : 0, n, 4 + 4 * count + (two_bit ? 8 + (count + 3) / 4 : 4 * count));
  store_le<std::uint32_t>(body, static_cast<std::uint32_t>(count));
  std::memcpy(body + 4, idx_.data(), 4 * count);
  if (two_bit) write_two_bit(count, residual, body + 4 + 4 * count);
  else std::memcpy(body + 4 + 4 * count, val_.data(), 4 * count);
  last_sent_ = count;
  return Error::ok;
}

// The two magnitudes and the codes of the selected values; each rounding error goes back
// into the residual at its index (the selection left zero there).
void TopKCodec::write_two_bit(std::size_t count, Span<float> residual, std::uint8_t* body) {
  float lo_mag = FLT_MAX, hi_mag = 0.0f;
  for (std::size_t j = 0; j < count; ++j) lo_mag = std::min(lo_mag, std::fabs(val_[j])), hi_mag = std::max(hi_mag, std::fabs(val_[j]));
  const float mid = 0.5f * (lo_mag + hi_mag);
  double sums[2] = {0.0, 0.0};
  std::size_t counts[2] = {0, 0};
  for (std::size_t j = 0; j < count; ++j) {
    const bool high = std::fabs(val_[j]) > mid;
    sums[high] += std::fabs(val_[j]), ++counts[high];
  }
  const float low = counts[0] ? static_cast<float>(sums[0] / counts[0]) : 0.0f;
  const float high = counts[1] ? static_cast<float>(sums[1] / counts[1]) : low;
  store_le<float>(body, low);
  store_le<float>(body + 4, high);
  std::uint8_t* codes = body + 8;
  std::memset(codes, 0, (count + 3) / 4);
  for (std::size_t j = 0; j < count; ++j) {
    const bool negative = val_[j] < 0.0f, is_high = std::fabs(val_[j]) > mid;
    codes[j / 4] |= static_cast<std::uint8_t>((negative | (is_high << 1)) << (2 * (j % 4)));
    const float sent = (negative ? -1.0f : 1.0f) * (is_high ? high : low);
    residual[idx_[j]] = val_[j] - sent;
  }
}

Error TopKCodec::decode(ByteSpan payload, Span<float> out, Apply apply) const {
  std::uint8_t format = 0;
  ByteSpan body;
  if (Error e = open_payload(payload, id(), out.size(), format, body); e != Error::ok) return e;
  if (format != 0 && format != 2) return Error::bad_parameter;
  ByteReader reader(body);
  const std::uint32_t count = reader.read<std::uint32_t>();
  if (!reader.ok()) return Error::truncated;
  if (count > out.size()) return Error::bad_parameter;
  const std::uint64_t need = 4ull * count + (format == 2 ? 8 + (count + 3ull) / 4 : 4ull * count);
  if (reader.remaining() < need) return Error::truncated;
  if (reader.remaining() > need) return Error::oversized;
  const std::uint8_t* idx = body.data() + 4;
  const std::uint8_t* val = idx + 4ull * count;
  std::int64_t previous = -1;
  for (std::uint32_t j = 0; j < count; ++j) {
    const std::int64_t i = load_le<std::uint32_t>(idx + 4ull * j);
    if (i >= static_cast<std::int64_t>(out.size())) return Error::index_out_of_range;
    if (i <= previous) return Error::bad_index_order;
    previous = i;
  }
  if (format == 2) return decode_two_bit(idx, val, count, out, apply);
  if (!simd::codec_kernels().f32_finite(val, count)) return Error::non_finite;
  if (apply == Apply::assign) std::fill(out.begin(), out.end(), 0.0f);
  for (std::uint32_t j = 0; j < count; ++j) out[load_le<std::uint32_t>(idx + 4ull * j)] += load_le<float>(val + 4ull * j);
  return Error::ok;
}


namespace {

constexpr std::pair<std::string_view, double> kExact[] = {{"density", 0.01}};
constexpr std::pair<std::string_view, double> kTwoBit[] = {{"density", 0.01}, {"value_bits", 2}};
constexpr CodecSample kSamples[] = {{"topk", kExact}, {"topk-2bit", kTwoBit}};

std::optional<OptionProblem> check(const CodecOptions& o) {
  const double bits = kValueBits.of(o);
  if (bits != 32 && bits != 2) return OptionProblem{kValueBits.name, "expected 32 or 2"};
  return std::nullopt;
}

std::string label(const CodecOptions& o) {
  std::ostringstream out;
  out << "topk " << kDensity.of(o) * 100 << "%";
  if (kValueBits.of(o) != 32) out << " " << kValueBits.of(o) << "-bit values";
  return out.str();
}

}  // namespace

extern constexpr CodecRow topk_codec_row{
    TopKCodec::kId, "topk", AllreduceRoute::gather, kParams, check,
    [](const CodecOptions& o) -> std::unique_ptr<Codec> { return std::make_unique<TopKCodec>(o); }, label, kSamples};

}  // namespace starling::protocols::codecs
