#pragma once
// Compression codecs with error feedback over a flat float span. encode() sends
// values + residual and leaves in the residual what was not sent, so nothing is ever lost,
// only delayed; the caller owns one residual per destination or stream. A Codec object
// also carries its stream's adaptive state (threshold τ, PowerSGD's warm start, QSGD's
// round counter), so use one Codec per stream too. decode() is const, validates the whole
// payload before touching the destination, and reports malformed input as an Error.
//
// Every codec payload starts with the same 8 bytes:
//   +0 u8 codec id | +1 u8 format (per codec) | +2 u16 reserved, zero | +4 u32 element count
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "protocols/codec_id.h"
#include "protocols/error.h"
#include "protocols/span.h"

namespace starling::protocols {

/// Parameters of all codecs; each codec reads the ones it needs.
struct CodecOptions {
  double density = 0.01;      // topk: fraction sent; threshold: adaptive target (0 = fixed τ)
  float tau = 1e-4f;          // threshold: initial τ (DL4J's default)
  float clip = 0.0f;          // threshold: clamp the residual to ±clip·τ (0 = off)
  int bits = 8;               // qsgd: bits per entry, 2..8 (levels = 2^(bits-1) - 1)
  int value_bits = 32;        // topk: bits per value sent, 32 (exact) or 2 (SparseLoCo)
  int rank = 1;               // powersgd: rank r, 1..64
  std::uint32_t rows = 0;     // powersgd: matrix rows (0 = the divisor of n nearest √n)
  std::uint32_t bucket = 0;   // qsgd/sign: entries per scale (0 = codec default)
  std::uint64_t seed = 0x5EED5EEDull;  // qsgd rounding, powersgd initial Q, topk sampling
};

/// Whether decode() overwrites the destination or adds into it.
enum class Apply { assign, add };

class Codec {
 public:
  virtual ~Codec() = default;
  virtual CodecId id() const = 0;

  /// Encodes values + residual into out (replaced) and updates residual. Errors only on
  /// mismatched sizes or more than 2^31 - 1 elements (invalid_option).
  virtual Error encode(Span<const float> values, Span<float> residual, std::vector<std::uint8_t>& out) = 0;

  /// Decodes a payload for exactly out.size() elements; out is untouched on error.
  virtual Error decode(ByteSpan payload, Span<float> out, Apply apply) const = 0;

  /// Entries sent by the last encode() (all of them for dense codecs).
  std::size_t last_sent() const { return last_sent_; }

  /// Where this codec's random draws stand (QSGD's rounding, top-k's sampling; 0 for a codec
  /// that draws none). A codec made with the same options and given this by set_draws()
  /// encodes from then on what this one would: a checkpoint keeps it for an exact resume.
  virtual std::uint64_t draws() const { return 0; }
  virtual void set_draws(std::uint64_t) {}

 protected:
  std::size_t last_sent_ = 0;
};

/// Checks option ranges for a codec (invalid_option on a bad value).
Error validate_options(CodecId id, const CodecOptions& options);

/// A codec by wire id or by config name ("none", "fp16", "bf16", "threshold", "topk",
/// "qsgd", "sign", "powersgd"); unknown_codec for other names, invalid_option for bad options.
Result<std::unique_ptr<Codec>> make_codec(CodecId id, const CodecOptions& options = {});
Result<std::unique_ptr<Codec>> make_codec(std::string_view name, const CodecOptions& options = {});

}  // namespace starling::protocols
