#pragma once
// Where a peer binds, given the endpoint the config lists for it. Other peers connect to
// that endpoint, and ZeroMQ resolves a host name there by DNS (a Kubernetes headless
// service's `peer-0.starling`, a cluster's node names). A bind, though, takes an interface
// address, not a name: so a peer whose endpoint names its host binds every interface on
// that port, `tcp://*:PORT`, and one whose endpoint is a numeric address (127.0.0.1,
// 10.77.0.3, [::1]) or `*` binds exactly that.
#include <string>

namespace starling::gossip {

/// The endpoint to bind for `endpoint` (tcp://HOST:PORT); anything else is returned as it is.
std::string bind_endpoint_for(const std::string& endpoint);

}  // namespace starling::gossip
