// Typed errors of the gossip layer (gossip/transport/error.h).
#include "gossip/transport/error.h"

namespace starling::gossip {

GossipError::GossipError(const char* file, int line, const std::string& message)
    : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + message) {}

}  // namespace starling::gossip
