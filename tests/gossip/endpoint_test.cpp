// Endpoints that name hosts: a peer binds every interface when its endpoint names its host
// (ZeroMQ binds only addresses), others reach it by the name.
#define BOOST_TEST_MODULE gossip_endpoint
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "gossip/transport/endpoint.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"

using namespace starling::gossip;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_CASE(numeric_addresses_bind_as_given_and_names_bind_every_interface) {
  BOOST_TEST(bind_endpoint_for("tcp://127.0.0.1:5600") == "tcp://127.0.0.1:5600");
  BOOST_TEST(bind_endpoint_for("tcp://10.77.0.3:5600") == "tcp://10.77.0.3:5600");
  BOOST_TEST(bind_endpoint_for("tcp://[::1]:5600") == "tcp://[::1]:5600");
  BOOST_TEST(bind_endpoint_for("tcp://*:5600") == "tcp://*:5600");
  BOOST_TEST(bind_endpoint_for("tcp://starling-1.starling.default.svc.cluster.local:5600") == "tcp://*:5600");
  BOOST_TEST(bind_endpoint_for("tcp://localhost:5600") == "tcp://*:5600");
  BOOST_TEST(bind_endpoint_for("ipc:///tmp/x") == "ipc:///tmp/x");
}

BOOST_AUTO_TEST_CASE(a_peer_is_reached_by_host_name) {
  TransportContext context;
  TransportOptions o;
  o.self = 1, o.accept = {0}, o.linger_ms = 0;
  o.bind_endpoint = "tcp://*:*";  // what bind_endpoint_for gives a named host, on a free port
  Transport server(context, o);
  const std::string port = server.endpoint().substr(server.endpoint().rfind(':'));
  TransportOptions c;
  c.self = 0, c.accept = {1}, c.linger_ms = 0;
  Transport client(context, c);
  client.connect(1, "tcp://localhost" + port);  // resolved by name
  starling::protocols::FrameHeader h;
  h.type = starling::protocols::MessageType::gossip_push;
  h.tensor_length = 4;
  const std::vector<std::uint8_t> payload(16, 1);
  client.send(1, h, starling::protocols::ByteSpan(payload));
  BOOST_TEST(server.receive(5s).from == 0u);
}
