#pragma once
// The ISA paths this CPU runs, lowest first, for the suites that force each in turn with
// platform::force_isa and check every vectorized path against one reference.
#include "platform/cpu_features.h"

#include <vector>

namespace starling::testing {

inline std::vector<platform::Isa> supported_isas() {
  std::vector<platform::Isa> out;
  for (platform::Isa isa : {platform::Isa::scalar, platform::Isa::avx2, platform::Isa::avx512})
    if (static_cast<int>(isa) <= static_cast<int>(platform::detected_isa())) out.push_back(isa);
  return out;
}

}  // namespace starling::testing
