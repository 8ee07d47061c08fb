#pragma once
// PowerSGD (Vogels et al. 2019): a rank-r approximation P·Qᵀ of the rows×cols matrix view
// of values + residual, by one power-iteration step warm-started from the previous round's
// Q; what the approximation misses stays in the residual. It is the reduce-compatible
// codec: with a shared Q (same seed, same warm start), Σ_peers M_i·Q = (Σ M_i)·Q, so a ring
// all-reduce can sum P, orthonormalize, then sum Q = Mᵀ·P; the free functions below are
// those steps. Matrices are row-major; P is rows×r, Q is stored transposed (r×cols).
// Payload body:
//   +0 u32 rows | +4 u32 cols | +8 u32 rank | rows·rank f32 P | rank·cols f32 Qᵀ
#include <cstdint>
#include <vector>

#include "protocols/codec.h"
#include "protocols/codec_row.h"

namespace starling::protocols::codecs {

/// p[rows×rank] = m[rows×cols] · qt[rank×cols]ᵀ.
void powersgd_project(const float* m, std::size_t rows, std::size_t cols, const float* qt, std::size_t rank, float* p);
/// Orthonormalizes the columns of p[rows×rank] (modified Gram-Schmidt; zero columns stay zero).
void powersgd_orthonormalize(float* p, std::size_t rows, std::size_t rank);
/// qt[rank×cols] = (m[rows×cols]ᵀ · p[rows×rank])ᵀ.
void powersgd_back_project(const float* m, std::size_t rows, std::size_t cols, const float* p, std::size_t rank,
                           float* qt);
/// out[rows×cols] = sign·P·Qᵀ, or out += sign·P·Qᵀ when add (sign is +1 or -1).
void powersgd_expand(const float* p, const float* qt, std::size_t rows, std::size_t cols, std::size_t rank,
                     float sign, float* out, bool add);

class PowerSgdCodec final : public Codec {
 public:
  explicit PowerSgdCodec(const CodecOptions& options);
  static constexpr CodecId kId{7};
  CodecId id() const override { return kId; }
  /// invalid_option if option rows does not divide the element count.
  Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) override;
  Error decode(ByteSpan payload, Span<float> out, Apply apply) const override;

  static constexpr std::uint32_t kMaxRank = 64;
  /// Its options; PowerSgdAllreduce reads them too.
  static constexpr CodecParam kRank{"rank", 1, 1, kMaxRank, true, false, true, "the rank of the approximation"};
  static constexpr CodecParam kRows{"rows", 0, 0, 0x7FFFFFFF, true, false, false,
                                    "rows of the matrix view (0: the divisor of the length nearest its square root)"};

 private:
  void warm_start(std::size_t cols, std::size_t rank);

  std::uint32_t rank_;
  std::uint32_t rows_;
  std::uint64_t seed_;
  std::vector<float> p_;
  std::vector<float> qt_;  // warm start carried between rounds
};

}  // namespace starling::protocols::codecs
