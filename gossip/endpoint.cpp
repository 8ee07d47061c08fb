#include "gossip/endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

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

std::vector<std::string> free_loopback_endpoints(int count) {
  std::vector<int> sockets;
  std::vector<std::string> endpoints;
  auto release = [&] {
    for (int fd : sockets) ::close(fd);
  };
  for (int i = 0; i < count; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd >= 0) sockets.push_back(fd);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      release();
      throw std::runtime_error("no free port on 127.0.0.1");
    }
    endpoints.push_back("tcp://127.0.0.1:" + std::to_string(ntohs(address.sin_port)));
  }
  release();
  return endpoints;
}

}  // namespace starling::gossip
