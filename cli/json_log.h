#pragma once
// `--log-format json`: every log line (and the progress line) as one JSON object per line,
// {"time", "level", "logger", "message"}, for log shippers; the message is the text line's.
namespace starling::cli {

/// Switches the default logger's format to JSON lines and routes the progress line through it.
void use_json_log();

}  // namespace starling::cli
