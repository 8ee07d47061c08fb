#include "monitor/http_server.h"

#include <CivetServer.h>

namespace starling::monitor {

class HttpServer::Handler final : public CivetHandler {
 public:
  explicit Handler(const Routes& routes) : routes_(routes) {}

  bool handleGet(CivetServer*, mg_connection* conn) override {
    const mg_request_info* request = mg_get_request_info(conn);
    const auto route = routes_.find(request->local_uri ? request->local_uri : "");
    if (route == routes_.end()) {
      mg_send_http_error(conn, 404, "%s", "not found\n");
      return true;
    }
    const Response r = route->second();
    mg_printf(conn,
              "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
              "Access-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n",
              r.content_type.c_str(), r.body.size());
    mg_write(conn, r.body.data(), r.body.size());
    return true;
  }

 private:
  const Routes& routes_;
};

HttpServer::HttpServer(const std::string& bind, int port, Routes routes)
    : routes_(std::move(routes)), handler_(std::make_unique<Handler>(routes_)) {
  const std::vector<std::string> options{
      "listening_ports", bind + ":" + std::to_string(port),
      "num_threads", "4",
      "request_timeout_ms", "5000",
      "max_request_size", "16384",  // a larger request (its headers) is refused
      "enable_keep_alive", "no",
  };
  try {
    server_ = std::make_unique<CivetServer>(options);
  } catch (const CivetException& e) {
    throw PortUnavailable("cannot listen on " + bind + ":" + std::to_string(port) + " (taken, or not allowed)");
  }
  server_->addHandler("/", *handler_);  // every path: the handler routes exact paths
}

HttpServer::~HttpServer() {
  if (server_) server_->close();  // stops the threads before the handler goes
}

}  // namespace starling::monitor
