#include "actors/node_spec.h"

namespace starling::actors {

bool parse_intra_sync(const std::string& text, IntraSync& out) {
  for (std::size_t i = 0; i < std::size(kIntraSyncNames); ++i)
    if (text == kIntraSyncNames[i]) {
      out = static_cast<IntraSync>(i);
      return true;
    }
  return false;
}

const char* intra_sync_name(IntraSync mode) { return kIntraSyncNames[static_cast<int>(mode)]; }

}  // namespace starling::actors
