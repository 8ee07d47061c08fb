#pragma once
// The monitor's HTTP server: civetweb (Debian's libcivetweb) serving a fixed set of exact
// paths, each answered by a function; any other path gets 404, and civetweb itself rejects
// oversized requests. Answers carry Access-Control-Allow-Origin: * so one peer's live page
// may poll the others'.
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

class CivetServer;

namespace starling::monitor {

struct Response {
  std::string content_type;
  std::string body;
};

using Routes = std::map<std::string, std::function<Response()>>;

/// The port could not be bound (taken, or not allowed).
struct PortUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class HttpServer {
 public:
  /// Listens on bind:port (bind an IPv4 address) with a few threads of its own; throws
  /// PortUnavailable.
  HttpServer(const std::string& bind, int port, Routes routes);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

 private:
  class Handler;
  Routes routes_;
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<CivetServer> server_;
};

}  // namespace starling::monitor
