#pragma once
// The ISA paths this CPU runs, lowest first, for the suites that force each in turn with
// platform::force_isa and check every vectorized path against one reference.
#include "platform/cpu_features.h"

#include <vector>

namespace starling::testing {

inline std::vector<platform::Isa> supported_isas() {
  std::vector<platform::Isa> out;
  for (int level = 0; level <= static_cast<int>(platform::detected_isa()); ++level)
    out.push_back(static_cast<platform::Isa>(level));
  return out;
}

}  // namespace starling::testing
