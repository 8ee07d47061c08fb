#define BOOST_TEST_MODULE monitor
#include "monitor/live_state.h"
#include "monitor/peer_monitor.h"

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

using namespace starling;
using namespace starling::monitor;

namespace {

actors::NodeSnapshot snapshot(int64_t step, std::vector<gossip::PeerStatus> peers = {}) {
  actors::NodeSnapshot s;
  s.step = step, s.total_steps = 1000, s.wall_seconds = 0.1 * static_cast<double>(step), s.loss = 1.0 / (1 + step);
  s.peers = std::move(peers);
  s.peers_read = true;
  return s;
}

gossip::PeerStatus peer(uint32_t id, bool alive, bool suspected = false, bool finished = false) {
  gossip::PeerStatus p;
  p.id = id, p.alive = alive, p.suspected = suspected, p.finished = finished;
  p.traffic.bytes_sent = 100 * id;
  return p;
}

std::vector<std::string> event_texts(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (const auto& e : j["events"]) out.push_back(e["text"]);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(peer_states_become_events_once_each) {
  LiveState state({0, "run", "tcp://127.0.0.1:1", "accuracy", {{1, "tcp://127.0.0.1:2", "http://127.0.0.1:9101"}}});
  state.update(snapshot(1, {peer(1, true)}));
  state.update(snapshot(2, {peer(1, true, true)}));
  state.update(snapshot(3, {peer(1, true, true)}));
  state.update(snapshot(4, {peer(1, false)}));
  const auto j = nlohmann::json::parse(state.json());
  BOOST_TEST(event_texts(j) == (std::vector<std::string>{"training started", "peer 1 is suspected", "peer 1 is dead"}),
             boost::test_tools::per_element());
  BOOST_TEST(j["peers"][0]["state"] == "dead");
  BOOST_TEST(j["peers"][0]["monitor"] == "http://127.0.0.1:9101");
  BOOST_TEST(j["peers"][0]["bytes_sent"] == 100);
  BOOST_TEST(j["state"] == "training");
}

BOOST_AUTO_TEST_CASE(curves_stay_bounded_and_keep_their_ends) {
  LiveState state({0, "run", "", "accuracy", {}});
  const int64_t n = 3 * static_cast<int64_t>(kMaxCurvePoints);
  for (int64_t step = 1; step <= n; ++step) state.update(snapshot(step));
  state.update(snapshot(n, {}));  // no new step: no new point
  auto final_one = snapshot(n);
  final_one.final = true;
  state.update(final_one);
  const auto j = nlohmann::json::parse(state.json());
  BOOST_TEST(j["train"].size() <= kMaxCurvePoints);
  BOOST_TEST(j["train"].size() > kMaxCurvePoints / 2);
  BOOST_TEST(j["train"].front()[1] == 1.0);
  BOOST_TEST(j["train"].back()[1] == static_cast<double>(n));
  BOOST_TEST(j["state"] == "finished");
}

BOOST_AUTO_TEST_CASE(a_snapshot_without_the_peers_keeps_them_as_last_read) {
  LiveState state({0, "run", "", "accuracy", {{1, "", ""}}});
  state.update(snapshot(10, {peer(1, true)}));
  auto blind = snapshot(20);
  blind.peers_read = false;
  state.update(blind);
  auto later = snapshot(30, {peer(1, true)});
  later.peers[0].traffic.bytes_sent += 2000;  // over 2 s of the run since the last read
  state.update(later);
  const auto j = nlohmann::json::parse(state.json());
  BOOST_TEST(j["peers"][0]["state"] == "alive");
  BOOST_TEST(j["peers"][0]["sent_per_second"] == 1000.0);
  BOOST_TEST(j["step"] == 30);
}

BOOST_AUTO_TEST_CASE(the_state_digest_is_shown_as_the_summary_writes_it) {
  LiveState state({0, "run", "", "bits_per_byte", {}});
  state.update(snapshot(1));
  BOOST_TEST(!nlohmann::json::parse(state.json()).contains("state_hash"));  // gossip: no common state
  auto synced = snapshot(2);
  synced.state_digest = std::make_pair(uint64_t{7}, uint64_t{0x00ab12cd34ef5678});
  state.update(synced);
  auto blind = snapshot(3);
  blind.peers_read = false;  // a mix in flight: the digest as last read
  state.update(blind);
  const auto j = nlohmann::json::parse(state.json());
  BOOST_TEST(j["state_hash"] == "00ab12cd34ef5678");
  BOOST_TEST(j["state_round"] == 7);
}

BOOST_AUTO_TEST_CASE(events_keep_the_newest) {
  LiveState state({0, "run", "", "accuracy", {}});
  for (std::size_t i = 0; i < kMaxEvents + 10; ++i) state.event("line " + std::to_string(i));
  const auto texts = event_texts(nlohmann::json::parse(state.json()));
  BOOST_TEST(texts.size() == kMaxEvents);
  BOOST_TEST(texts.back() == "line " + std::to_string(kMaxEvents + 9));
}

BOOST_AUTO_TEST_CASE(monitor_urls_come_from_the_endpoints_host) {
  BOOST_TEST(monitor_url("tcp://10.0.0.7:5600", 9102) == "http://10.0.0.7:9102");
  BOOST_TEST(monitor_url("tcp://node-a:5600", 9100) == "http://node-a:9100");
  BOOST_TEST(monitor_url("tcp://*:5600", 9100) == "");
  BOOST_TEST(monitor_url("inproc-name", 9100) == "");
}
