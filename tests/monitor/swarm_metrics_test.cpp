#include "monitor/swarm_metrics.h"

#include <boost/test/unit_test.hpp>

#include <string>

using namespace starling;
using namespace starling::monitor;

namespace {

// The value of the sample line that starts with `series` ("name{labels}" or "name"), or -1.
double sample(const std::string& text, const std::string& series) {
  std::size_t at = 0;
  while ((at = text.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') return std::stod(text.substr(at + series.size() + 1));
    at += series.size();
  }
  return -1;
}

actors::NodeSnapshot with_traffic(uint64_t sent, uint64_t clipped) {
  actors::NodeSnapshot s;
  s.step = 10;
  gossip::PeerStatus p;
  p.id = 3, p.traffic.bytes_sent = sent, p.alive = false;
  s.peers.push_back(p);
  s.neighbours[3].rounds = 10, s.neighbours[3].clipped = clipped;
  s.drops["rate_limited"] = 2;
  s.peers_read = true;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(counters_follow_the_totals_and_never_go_back) {
  SwarmMetrics m({"run", 0, "gossip", "topk", false});
  m.update(with_traffic(1000, 1));
  m.update(with_traffic(2500, 4));
  m.update(with_traffic(2000, 3));  // a stale snapshot
  const std::string text = m.text();
  BOOST_TEST(sample(text, "starling_sent_bytes_total{codec=\"topk\",peer=\"3\"}") == 2500);
  BOOST_TEST(sample(text, "starling_neighbour_clipped_total{peer=\"3\"}") == 4);
  BOOST_TEST(sample(text, "starling_dropped_messages_total{reason=\"rate_limited\"}") == 2);
  BOOST_TEST(sample(text, "starling_dead_peers") == 1);
  BOOST_TEST(sample(text, "starling_step") == 10);
  BOOST_TEST(text.find("# TYPE starling_sent_bytes_total counter") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_validation_metric_follows_the_task) {
  EvalPoint p;
  p.test_accuracy = 0.75, p.test_loss = std::log(2.0);
  SwarmMetrics images({"run", 0, "none", "none", false}), text({"run", 0, "none", "none", true});
  images.update(p), text.update(p);
  BOOST_TEST(sample(images.text(), "starling_validation_accuracy") == 0.75);
  BOOST_TEST(sample(text.text(), "starling_validation_bits_per_byte") == 1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(sample(text.text(), "starling_validation_accuracy") == -1);
}
