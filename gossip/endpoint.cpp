#include "gossip/endpoint.h"

#include <arpa/inet.h>

namespace starling::gossip {
namespace {

bool numeric_address(std::string host) {
  if (host == "*") return true;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned char buffer[16];
  return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 || ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

}  // namespace

std::string bind_endpoint_for(const std::string& endpoint) {
  const std::string scheme = "tcp://";
  const auto colon = endpoint.rfind(':');
  if (endpoint.rfind(scheme, 0) != 0 || colon == std::string::npos || colon < scheme.size()) return endpoint;
  const std::string host = endpoint.substr(scheme.size(), colon - scheme.size());
  return numeric_address(host) ? endpoint : scheme + "*" + endpoint.substr(colon);
}

}  // namespace starling::gossip
