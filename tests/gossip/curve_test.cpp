// CURVE on the transport and key files: admitted peers talk; strangers (a key not on the
// allow-list, no CURVE at all, an admitted key claiming another peer's id) get nothing into
// the inbox and are counted; key files round-trip and bad ones fail with path and reason.
#define BOOST_TEST_MODULE gossip_curve
#include <boost/test/unit_test.hpp>

#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gossip/transport/curve_keys.h"
#include "gossip/transport/error.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"
#include "gossip/transport/zmq/curve_pairs.h"

using namespace starling::gossip;
using namespace starling::protocols;
using namespace std::chrono_literals;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/starling-keys-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

FrameHeader pull_header() {
  FrameHeader h;
  h.type = MessageType::gossip_pull;
  return h;
}

TransportOptions secure_options(PeerId self, const CurveKeyPair& keys, std::vector<std::string> allowed) {
  TransportOptions o;
  o.self = self;
  o.linger_ms = 0;
  o.accept = {0, 1, 2, 3};
  o.curve = CurveSecurity{};
  o.curve->keys = keys;
  o.curve->allowed_keys = std::move(allowed);
  return o;
}

std::uint64_t drops(const Transport& t, const std::string& reason) {
  const TransportStats s = t.stats();
  const auto it = s.drops.find(reason);
  return it == s.drops.end() ? 0 : it->second;
}

// Waits up to two seconds for a drop reason to be counted.
std::uint64_t await_drop(const Transport& t, const std::string& reason) {
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (drops(t, reason) == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  return drops(t, reason);
}

void expect_key_error(const std::function<void()>& body, const std::string& path, const std::string& reason_part) {
  try {
    body();
    BOOST_ERROR("no KeyFileError for " << path);
  } catch (const KeyFileError& e) {
    BOOST_TEST(e.path() == path);
    BOOST_TEST(e.reason().find(reason_part) != std::string::npos, e.reason());
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(key_files_round_trip_with_private_secret) {
  TempDir dir;
  const CurveKeyPair written = write_keypair(dir.path, "node0");
  BOOST_TEST(is_z85_key(written.public_key));
  const CurveKeyPair read = read_keypair(dir.path, "node0");
  BOOST_TEST(read.public_key == written.public_key);
  BOOST_TEST(read.secret_key == written.secret_key);
  BOOST_TEST(read_public_key(dir.path + "/node0.pub") == written.public_key);
  struct stat st {};
  BOOST_REQUIRE(::stat((dir.path + "/node0.key").c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 0777) == 0600u);
  expect_key_error([&] { write_keypair(dir.path, "node0"); }, dir.path + "/node0.key", "already exists");
  write_keypair(dir.path, "node0", generate_keypair(), true);
}

BOOST_AUTO_TEST_CASE(bad_key_files_give_path_and_reason) {
  TempDir dir;
  write_keypair(dir.path, "a");
  write_keypair(dir.path, "b");
  const std::string missing = dir.path + "/none.pub";
  expect_key_error([&] { read_public_key(missing); }, missing, "no such file");
  const std::string corrupt = dir.path + "/a.pub";
  std::ofstream(corrupt) << "this is not a key\n";
  expect_key_error([&] { read_public_key(corrupt); }, corrupt, "not a CURVE key");
  const std::string secret = dir.path + "/b.key";
  ::chmod(secret.c_str(), 0644);
  expect_key_error([&] { read_secret_key(secret); }, secret, "readable by others");
  ::chmod(secret.c_str(), 0600);
  ::rename((dir.path + "/a.key").c_str(), (dir.path + "/b.key").c_str());
  expect_key_error([&] { read_keypair(dir.path, "b"); }, dir.path + "/b.pub", "does not belong");
  expect_key_error([&] { write_keypair(dir.path, "../x"); }, dir.path + "/../x", "plain file name");
}

BOOST_AUTO_TEST_CASE(admitted_peers_exchange_messages) {
  TransportContext context;
  const CurveKeyPair a = generate_keypair(), b = generate_keypair();
  Transport ta(context, secure_options(0, a, {b.public_key}));
  Transport tb(context, secure_options(1, b, {a.public_key}));
  ta.connect(1, tb.endpoint(), b.public_key);
  tb.connect(0, ta.endpoint(), a.public_key);
  const std::vector<std::uint8_t> payload{1, 2, 3};
  ta.send(1, pull_header(), payload);
  tb.send(0, pull_header(), payload);
  const Message at_b = tb.receive(3s);
  const Message at_a = ta.receive(3s);
  BOOST_TEST(at_b.from == 0u);
  BOOST_TEST(at_a.from == 1u);
  BOOST_TEST(at_b.payload.size() == 3u);
  BOOST_TEST(ta.stats().dropped() == 0u);
}

BOOST_AUTO_TEST_CASE(stranger_with_unlisted_key_gets_nothing_through) {
  TransportContext context;
  const CurveKeyPair a = generate_keypair(), stranger = generate_keypair();
  std::vector<std::string> refusals;
  std::mutex mutex;
  TransportOptions oa = secure_options(0, a, {generate_keypair().public_key});
  oa.curve->on_refusal = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    refusals.push_back(line);
  };
  Transport ta(context, oa);
  Transport ts(context, secure_options(2, stranger, {a.public_key}));
  ts.connect(0, ta.endpoint(), a.public_key);
  ts.send(0, pull_header(), std::vector<std::uint8_t>{9});
  BOOST_TEST(await_drop(ta, "zap_refused") >= 1u);
  BOOST_TEST(!ta.try_receive(Transport::Clock::now() + 300ms).has_value());
  std::lock_guard<std::mutex> lock(mutex);
  BOOST_REQUIRE(!refusals.empty());
  BOOST_TEST(refusals[0].find(stranger.public_key) != std::string::npos, refusals[0]);
}

BOOST_AUTO_TEST_CASE(stranger_without_curve_gets_nothing_through) {
  TransportContext context;
  const CurveKeyPair a = generate_keypair();
  Transport ta(context, secure_options(0, a, {}));
  TransportOptions plain;
  plain.self = 3;
  plain.linger_ms = 0;
  Transport tp(context, plain);
  tp.connect(0, ta.endpoint());
  tp.send(0, pull_header(), std::vector<std::uint8_t>{9});
  BOOST_TEST(await_drop(ta, "handshake_failed_protocol") >= 1u);
  BOOST_TEST(!ta.try_receive(Transport::Clock::now() + 300ms).has_value());
}

BOOST_AUTO_TEST_CASE(admitted_key_cannot_claim_another_peers_id) {
  TransportContext context;
  const CurveKeyPair a = generate_keypair(), b = generate_keypair(), c = generate_keypair();
  TransportOptions oa = secure_options(0, a, {b.public_key, c.public_key});
  oa.curve->peer_keys = {{1, b.public_key}};
  Transport ta(context, oa);
  Transport impostor(context, secure_options(1, c, {a.public_key}));  // c's key, b's id
  impostor.connect(0, ta.endpoint(), a.public_key);
  impostor.send(0, pull_header(), std::vector<std::uint8_t>{9});
  BOOST_TEST(await_drop(ta, "key_mismatch") >= 1u);
  BOOST_TEST(!ta.try_receive().has_value());
}

BOOST_AUTO_TEST_CASE(curve_misuse_is_a_typed_error) {
  TransportContext context;
  TransportOptions bad = secure_options(0, CurveKeyPair{"short", "short"}, {});
  BOOST_CHECK_THROW(Transport(context, bad), InvalidArgument);
  TransportOptions plain;
  Transport tp(context, plain);
  BOOST_CHECK_THROW(tp.connect(1, "tcp://127.0.0.1:1", generate_keypair().public_key), InvalidArgument);
  BOOST_CHECK_THROW(tp.admit(generate_keypair().public_key), InvalidArgument);
  Transport ts(context, secure_options(0, generate_keypair(), {}));
  BOOST_CHECK_THROW(ts.connect(1, "tcp://127.0.0.1:1"), InvalidArgument);  // no key for peer 1
}
