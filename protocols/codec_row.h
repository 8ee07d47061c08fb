#pragma once
// A codec as one row: all the rest of Starling knows of it. Each codec's file in
// protocols/codecs/ defines its row, `extern constexpr CodecRow <file name>_row`, and
// protocols/CMakeLists.txt lists those files once; from that list it writes the table of
// rows (codec_rows.cpp, in the build folder), which codec_rows() returns. The factory, the
// frame checks, the config's keys and checks, the exchange algorithms, the simulator and the
// benchmark read the rows: no other list names every codec. Adding a codec is its file (and
// its kernel, if it has one) plus a line in that list.
//
// The generated table refers to every row, so the linker keeps each codec's object file
// although nothing else names it; rows are constant-initialized, so they can be read at any
// time, static initialization included.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "protocols/codec.h"
#include "protocols/span.h"

namespace starling::protocols {

/// How a codec's payloads join an all-reduce (gossip/algorithms/compressed_allreduce.h).
enum class AllreduceRoute : std::uint8_t {
  ring,      // each entry decodes on its own: segments are decoded, added in fp32 and encoded again at every hop
  low_rank,  // PowerSGD: its factors are summed by ring (gossip/algorithms/powersgd_allreduce.h)
  gather,    // every peer's payload goes to every peer, and each decodes them all
};

/// One option of a codec: CodecOptions' name for it, and the config key compression.<name>.
struct CodecParam {
  std::string_view name;
  double fallback;       // its default
  double min, max;       // allowed: [min, max], or (min, max] when open_min
  bool integer;          // whole numbers only
  bool open_min;
  bool config_key;       // false: set by code and tests only
  std::string_view doc;  // one line for the config reference, without the codec's name

  double of(const CodecOptions& options) const { return options.get(name, fallback); }
  bool allows(double value) const;
  /// What allows() accepts, as errors say it: "an integer in [2, 8]", "a number in (0, 1]".
  std::string range() const;
};

/// A bad option: which one, and what was expected ("expected 32 or 2").
struct OptionProblem {
  std::string_view param;
  std::string why;
};

/// A named setting of a codec's options. The benchmark, the fuzz seeds and the tests that
/// run every codec run each sample; together they reach each of the codec's formats.
struct CodecSample {
  std::string_view label;  // "qsgd4"
  Span<const std::pair<std::string_view, double>> values;

  CodecOptions options() const;
};

struct CodecRow {
  CodecId id;             // the wire byte, never reused
  std::string_view name;  // compression.codec
  AllreduceRoute route;
  Span<const CodecParam> params;
  /// Checks across or within options beyond each one's range; nullptr: none.
  std::optional<OptionProblem> (*check)(const CodecOptions& options);
  /// A codec; options already passed check_options().
  std::unique_ptr<Codec> (*make)(const CodecOptions& options);
  /// How reports name it with these options ("qsgd 4-bit"); nullptr: its name.
  std::string (*label)(const CodecOptions& options);
  Span<const CodecSample> samples;  // at least one

  const CodecParam* param(std::string_view param_name) const;
  /// Option param_name's value or default; nullopt when the codec has no such option.
  std::optional<double> value(const CodecOptions& options, std::string_view param_name) const;
  std::string label_for(const CodecOptions& options) const { return label ? label(options) : std::string(name); }
};

/// Every codec row, in the order of protocols/CMakeLists.txt's list.
Span<const CodecRow* const> codec_rows();

/// The row of a wire id or a config name; nullptr when this build has none.
const CodecRow* codec_row(CodecId id);
const CodecRow* codec_row(std::string_view name);

/// The first problem of options for row: each option's range, then the row's check.
std::optional<OptionProblem> check_options(const CodecRow& row, const CodecOptions& options);

}  // namespace starling::protocols
