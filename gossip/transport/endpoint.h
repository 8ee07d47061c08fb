#pragma once
// Where a peer binds, given the endpoint the config lists for it. Other peers connect to
// that endpoint, and ZeroMQ resolves a host name there by DNS (a Kubernetes headless
// service's `peer-0.starling`, a cluster's node names). A bind, though, takes an interface
// address, not a name: so a peer whose endpoint names its host binds every interface on
// that port, `tcp://*:PORT`, and one whose endpoint is a numeric address (127.0.0.1,
// 10.77.0.3, [::1]) or `*` binds exactly that.
#include <string>
#include <vector>

namespace starling::gossip {

/// The endpoint to bind for `endpoint` (tcp://HOST:PORT); anything else is returned as it is.
std::string bind_endpoint_for(const std::string& endpoint);

/// `count` endpoints tcp://127.0.0.1:PORT on ports the kernel says are free now, for peers in
/// one process or on one host whose endpoints must all be named before any binds (an
/// ExchangeSpec). The ports are drawn above the ephemeral range, so that no outgoing
/// connection takes one before the peer binds it. Each is held until all are picked, so the
/// list has no repeats; another process may still take one meanwhile, which the peer's bind
/// then reports. Throws std::runtime_error when no port can be had.
std::vector<std::string> free_loopback_endpoints(int count);

}  // namespace starling::gossip
