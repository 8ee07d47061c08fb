#pragma once
// The config schema (cli/config_schema.h) written out for readers: the config reference's
// key table (docs/config.md) in Markdown, and JSON for programs.
#include <string>

namespace starling::cli {

/// The Markdown table of every key: key, type, default, allowed values, meaning. The key
/// table of docs/config.md is this text (scripts/config_keys_doc.sh checks and rewrites it).
std::string schema_markdown();

/// A JSON array with one object per key: "key", "type", "default" (absent when required or a
/// layer list), "min", "max" and "min_exclusive" for numbers and integers (no "max" when
/// unbounded), "choices" for a choice, "required" and "doc".
std::string schema_json();

}  // namespace starling::cli
