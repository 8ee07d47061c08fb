#pragma once
// Loopback endpoints on ports the kernel says are free now, for suites that must name every
// peer's endpoint before any of them binds (an ExchangeSpec). Each port is held until all
// are picked, so the list has no repeats; another process may still take one meanwhile,
// which a test then reports as a failed bind.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace starling::testing {

inline std::vector<std::string> free_loopback_endpoints(int count) {
  std::vector<int> sockets;
  std::vector<std::string> endpoints;
  for (int i = 0; i < count; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("no free loopback port");
    sockets.push_back(fd);
    endpoints.push_back("tcp://127.0.0.1:" + std::to_string(ntohs(address.sin_port)));
  }
  for (int fd : sockets) ::close(fd);
  return endpoints;
}

}  // namespace starling::testing
