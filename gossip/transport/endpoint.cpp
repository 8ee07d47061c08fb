#include "gossip/transport/endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <stdexcept>

namespace starling::gossip {
namespace {

bool numeric_address(std::string host) {
  if (host == "*") return true;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned char buffer[16];
  return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 || ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// Ports above the kernel's ephemeral range (32768–60999 by default) and above the fixed
// ranges the shell tests use: a port picked here and released is not handed out meanwhile
// as the source port of some connection, which a port from bind(0) can be.
constexpr int kFirstPort = 61000, kLastPort = 65535;
constexpr int kTriesPerPort = 64;

// A socket bound to 127.0.0.1:port (0: any free port), or -1.
int bound_socket(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
  ::close(fd);
  return -1;
}

int port_of(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  return ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 ? ntohs(address.sin_port) : -1;
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
  std::mt19937 pick(std::random_device{}());
  std::uniform_int_distribution<int> port(kFirstPort, kLastPort);
  for (int i = 0; i < count; ++i) {
    int fd = -1;
    for (int t = 0; t < kTriesPerPort && fd < 0; ++t) fd = bound_socket(port(pick));
    if (fd < 0) fd = bound_socket(0);  // that band is full: any free port
    const int bound = fd < 0 ? -1 : port_of(fd);
    if (fd >= 0) sockets.push_back(fd);
    if (bound <= 0) {
      release();
      throw std::runtime_error("no free port on 127.0.0.1");
    }
    endpoints.push_back("tcp://127.0.0.1:" + std::to_string(bound));
  }
  release();
  return endpoints;
}

}  // namespace starling::gossip
