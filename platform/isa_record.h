#pragma once
// Where each ISA path of this architecture last passed the test suites that force it (the
// kernels', codecs', CRC-32C's, robust aggregation's and learners'), on a CPU that runs it:
// code no test has run there must not be the default. `starling --version` prints the
// record; docs/platforms.md has the commands and what each run entered.
#include "platform/cpu_features.h"

#include <string_view>
#include <vector>

namespace starling::platform {

struct IsaRecord {
  Isa isa;
  std::string_view tested;  // the date and the CPU (or emulator) of the passing run
};

/// This architecture's paths, lowest first, with their records.
const std::vector<IsaRecord>& isa_records();

}  // namespace starling::platform
