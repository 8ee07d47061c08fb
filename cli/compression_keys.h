#pragma once
// The config schema's [compression] section (cli/config_schema.h): the codec, one key per
// codec option (drawn from the codec rows, protocols/codec_row.h), and adaptive compression.
#include <vector>

#include "cli/config_schema.h"

namespace starling::cli {

/// The [compression] keys, in the schema's order.
std::vector<KeySpec> compression_keys();

}  // namespace starling::cli
