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
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocols/codec_id.h"
#include "protocols/error.h"
#include "protocols/span.h"

namespace starling::protocols {

/// A codec's options by name ("bits", "density": the names its row declares, see
/// protocols/codec_row.h) and the seed of its random draws. A codec reads the names it
/// declares, taking its default for those not set, and ignores the others.
class CodecOptions {
 public:
  std::uint64_t seed = 0x5EED5EEDull;  // QSGD's rounding, PowerSGD's initial Q, top-k's sampling

  /// Sets (or replaces) one option.
  CodecOptions& set(std::string_view name, double value);
  /// The option's value, if it was set.
  std::optional<double> find(std::string_view name) const;
  /// The option's value, or fallback if it was not set.
  double get(std::string_view name, double fallback) const { return find(name).value_or(fallback); }

 private:
  std::vector<std::pair<std::string, double>> values_;
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

/// Checks a codec's options against its row (protocols/codec_row.h): unknown_codec for an
/// id this build lacks, invalid_option for a bad value.
Error validate_options(CodecId id, const CodecOptions& options);

/// A codec by wire id or by config name (a row's name); unknown_codec for other names,
/// invalid_option for bad options.
Result<std::unique_ptr<Codec>> make_codec(CodecId id, const CodecOptions& options = {});
Result<std::unique_ptr<Codec>> make_codec(std::string_view name, const CodecOptions& options = {});

}  // namespace starling::protocols
