// The scaling model's arithmetic: closed forms against numbers worked by hand, the
// discrete-event models against the closed forms when nobody straggles, SPEC and straggler
// parsing, and consistency (more bandwidth is never slower; one peer is speedup 1).
#define BOOST_TEST_MODULE simulator_model
#include <boost/test/unit_test.hpp>

#include "simulator/collectives.h"
#include "simulator/event_sim.h"
#include "simulator/network.h"
#include "simulator/scaling_model.h"
#include "simulator/stragglers.h"

#include <cmath>

using namespace starling::simulator;
using starling::gossip::ExchangeMode;

namespace {

// A made-up machine: 300 µs steps, 40 µs loopback, 1 ns CPU per byte.
Measured machine() {
  Measured m;
  m.step_seconds = 300e-6;
  m.handoff_seconds = 5e-6;
  m.add_seconds_per_element = 0.1e-9;
  m.loopback = {40e-6, 1e9, 1e-9};
  m.crowded_latency = {{2, 60e-6}, {4, 80e-6}, {8, 120e-6}, {16, 160e-6}};
  m.codec = {"topk", 0.5e-9, 0.05e-9, 20000};
  return m;
}

Workload mlp(ExchangeMode mode, const std::string& codec = "none", int period = 1) {
  Workload w;
  w.parameters = 235152;
  w.mode = mode;
  w.codec = codec;
  w.period = period;
  return w;
}

Cluster on(const std::string& network, int peers) {
  Cluster c;
  c.network = parse_network(network);
  c.peers = peers;
  return c;
}

// The crowded ring step's latency at 6 peers: halfway between the measured 4 and 8.
double at_six_latency(const Measured& m) { return (m.crowded_latency.at(4) + m.crowded_latency.at(8)) / 2; }

// The ring all-reduce's reduction on one peer: (p−1)/p of the elements added.
double add_for(const Workload& w, const Measured& m, int p) {
  return (p - 1.0) / p * w.parameters * m.add_seconds_per_element;
}

}  // namespace

BOOST_AUTO_TEST_CASE(closed_forms_match_hand_computations) {
  const Wire w{1e-4, 1e-9};  // 100 µs, 1 GB/s
  // 4 peers, 4 MB: 6 steps of a 1 MB chunk plus one 48-byte header.
  const Cost ar = ring_allreduce(4, 4e6, 1e6, w, 0.0);
  BOOST_TEST(ar.seconds == 6 * (1e-4 + 1000048e-9), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(ar.bytes_sent == 6 * 1000048.0);
  // The reduction: (p−1)/p · n adds.
  BOOST_TEST(ring_allreduce(4, 4e6, 1e6, w, 1e-9).seconds - ar.seconds == 0.75e-3, boost::test_tools::tolerance(1e-9));
  // 8 peers forward 1000-byte payloads 7 times.
  BOOST_TEST(ring_allgather(8, 1000, w).seconds == 7 * (1e-4 + 1048e-9), boost::test_tools::tolerance(1e-12));
  // Ring neighbours: two 1 MB vectors one after the other, one α.
  BOOST_TEST(neighbour_push(2, 1e6, w).seconds == 1e-4 + 2 * 1000048e-9, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(pairwise_exchange(1e6, w).seconds == 2 * (1e-4 + 1000048e-9), boost::test_tools::tolerance(1e-12));
  // A 3 MiB vector travels in three segments, three headers.
  BOOST_TEST(framed_bytes(3.0 * (1 << 20)) == 3.0 * (1 << 20) + 3 * 48);
  BOOST_TEST(ring_allreduce(1, 4e6, 1e6, w, 1e-9).seconds == 0.0);
}

BOOST_AUTO_TEST_CASE(network_specs_parse_and_bad_ones_are_refused) {
  const NetworkSpec ten = parse_network("10gbit");
  BOOST_TEST(ten.link.beta_bytes_per_second == 1.25e9);
  BOOST_TEST(ten.link.alpha_seconds == kDefaultLatency);
  const NetworkSpec one = parse_network("1gbit:50us");
  BOOST_TEST(one.link.beta_bytes_per_second == 1.25e8);
  BOOST_TEST(one.link.alpha_seconds == 50e-6, boost::test_tools::tolerance(1e-15));
  const NetworkSpec slow = parse_network("100mbit:1ms");
  BOOST_TEST(slow.link.beta_bytes_per_second == 12.5e6);
  BOOST_TEST(slow.link.alpha_seconds == 1e-3, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(slow.link.burst_bytes == 0.0);
  const NetworkSpec bucket = parse_network("100mbit:50us:125kb");
  BOOST_TEST(bucket.link.burst_bytes == 125e3);
  BOOST_TEST(parse_network("1gbit:0us:64KiB").link.burst_bytes == 65536.0);
  // The bucket spares what it holds, at most what compute refilled and what is sent.
  BOOST_TEST(bucket.link.bucket_bytes(40e3, 1.0) == 40e3);
  BOOST_TEST(bucket.link.bucket_bytes(1e6, 1.0) == 125e3);
  BOOST_TEST(bucket.link.bucket_bytes(1e6, 1e-3) == 12.5e3, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(slow.link.bucket_bytes(1e6, 1.0) == 0.0);
  BOOST_TEST(parse_network("loopback").loopback);
  BOOST_TEST(parse_network("1Gbit:0us").link.alpha_seconds == 0.0);
  for (const char* bad : {"", "fast", "10", "10gbps", "0gbit", "-1gbit", "10gbit:", "10gbit:5parsecs", "10gbit:-1ms", "10gbit:1ms:", "10gbit:1ms:5", "10gbit:1ms:0kb", "10gbit:1ms:5kb:1"})
    BOOST_CHECK_THROW(parse_network(bad), SpecError);
}

BOOST_AUTO_TEST_CASE(straggler_distributions_parse_and_have_their_means) {
  BOOST_TEST(!parse_stragglers("none").active());
  const Stragglers log = parse_stragglers("lognormal:0.3");
  std::mt19937_64 rng(3);
  double sum = 0;
  for (int i = 0; i < 200000; ++i) sum += log.draw(rng);
  BOOST_TEST(sum / 200000 == 1.0, boost::test_tools::tolerance(0.01));
  BOOST_TEST(parse_stragglers("bimodal:0.1:3").mean() == 1.2, boost::test_tools::tolerance(1e-12));
  for (const char* bad : {"lognormal", "lognormal:x", "lognormal:-1", "bimodal:0.1", "bimodal:2:3", "bimodal:0.1:0.5", "gamma:1"})
    BOOST_CHECK_THROW(parse_stragglers(bad), SpecError);
}

BOOST_AUTO_TEST_CASE(event_models_reduce_to_the_closed_form_without_stragglers) {
  RoundModel m;
  m.peers = 64, m.steps_per_round = 8, m.step_seconds = 1e-3, m.round_overhead_seconds = 1e-5, m.exchange_seconds = 2e-3;
  const double closed = 8e-3 + 1e-5 + 2e-3;
  BOOST_TEST(barrier_round_seconds(m) == closed, boost::test_tools::tolerance(1e-9));
  const InNeighbours ring = [](int r, std::uint64_t) { return std::vector<int>{(r + 63) % 64, (r + 1) % 64}; };
  BOOST_TEST(neighbour_round_seconds(m, ring) == closed, boost::test_tools::tolerance(1e-9));
  std::vector<std::vector<int>> lists(64);
  for (int r = 0; r < 64; ++r) lists[r] = ring(r, 0);
  m.steps_per_round = 1;
  BOOST_TEST(staleness_step_seconds(m, lists, 4) == 1e-3 + 1e-5 + 2e-3, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(stragglers_slow_a_barrier_more_than_neighbours_and_more_with_more_peers) {
  RoundModel m;
  m.steps_per_round = 1, m.step_seconds = 1e-3, m.exchange_seconds = 1e-4;
  m.stragglers = parse_stragglers("lognormal:0.3");
  m.peers = 4;
  const double four = barrier_round_seconds(m);
  m.peers = 256;
  const double many = barrier_round_seconds(m);
  BOOST_TEST(four > 1.1e-3);
  BOOST_TEST(many > four);
  const InNeighbours ring = [](int r, std::uint64_t) { return std::vector<int>{(r + 255) % 256, (r + 1) % 256}; };
  BOOST_TEST(neighbour_round_seconds(m, ring) < many);
}

BOOST_AUTO_TEST_CASE(the_allreduce_prediction_is_the_closed_form_when_nobody_straggles) {
  const Measured m = machine();
  const Workload w = mlp(ExchangeMode::allreduce);
  const Prediction p = predict(w, m, on("1gbit:50us", 16), 1);
  const Cost ring = ring_allreduce(16, 4 * w.parameters, w.parameters, Wire{50e-6, 8e-9}, m.add_seconds_per_element);
  BOOST_TEST(p.exchange_seconds == ring.seconds, boost::test_tools::tolerance(1e-9));
  // The control plane: one peer a host, watching the 7 peers 1, 2, 4 and 8 places away
  // (8 places either way is one peer), 7/h heartbeats a second out and as many in at α
  // each, of the host's 3 cores (the learner, the node's thread and the I/O thread).
  const double control = 7 / w.heartbeat_seconds * m.loopback.alpha_seconds / 3;
  BOOST_TEST(p.control_messages_per_second == 7 / w.heartbeat_seconds, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(p.round_seconds == m.step_seconds / (1 - control) + 2 * m.handoff_seconds + ring.seconds,
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(p.control_seconds == m.step_seconds / (1 - control) * control, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(p.bytes_per_peer_per_round == ring.bytes_sent);
  BOOST_TEST(p.samples_per_second == 16 * 32 / p.round_seconds, boost::test_tools::tolerance(1e-9));
  const Prediction one = predict(w, m, on("1gbit:50us", 1), 1);
  BOOST_TEST(one.speedup == 1.0, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(more_bandwidth_or_less_latency_is_never_slower) {
  const Measured m = machine();
  const std::vector<Workload> works = {mlp(ExchangeMode::allreduce), mlp(ExchangeMode::local_sgd, "none", 8),
                                       mlp(ExchangeMode::gossip), mlp(ExchangeMode::gossip, "topk"),
                                       mlp(ExchangeMode::allreduce, "topk"), mlp(ExchangeMode::async_gossip)};
  const std::vector<std::string> nets = {"100mbit:1ms", "1gbit:1ms", "1gbit:50us", "10gbit:50us", "100gbit:5us"};
  for (const Workload& w : works)
    for (int peers : {2, 8, 64, 1024}) {
      double previous = 0;
      for (const auto& net : nets) {
        const double rate = predict(w, m, on(net, peers), 1).samples_per_second;
        BOOST_TEST(rate >= previous * (1 - 1e-12), starling::gossip::exchange_mode_name(w.mode) << " " << w.codec << " at " << peers << " on " << net);
        previous = rate;
      }
    }
}

BOOST_AUTO_TEST_CASE(local_sgd_and_compression_send_less_and_scale_further) {
  const Measured m = machine();
  const Prediction every = predict(mlp(ExchangeMode::allreduce), m, on("1gbit", 128), 1);
  const Prediction local = predict(mlp(ExchangeMode::local_sgd, "none", 8), m, on("1gbit", 128), 1);
  const Prediction choco = predict(mlp(ExchangeMode::gossip, "topk"), m, on("1gbit", 128), 1);
  const Prediction gossip = predict(mlp(ExchangeMode::gossip), m, on("1gbit", 128), 1);
  BOOST_TEST(local.speedup > every.speedup);
  BOOST_TEST(choco.bytes_per_peer_per_round < gossip.bytes_per_peer_per_round / 10);
  BOOST_TEST(choco.speedup > gossip.speedup);
  BOOST_TEST(every.efficiency <= 1.0);
}

BOOST_AUTO_TEST_CASE(a_crowded_host_shares_its_cores) {
  Measured m = machine();
  const Workload w = mlp(ExchangeMode::local_sgd, "none", 8);
  Cluster c = on("loopback", 8);
  c.cores_per_host = 2;
  const Prediction p = predict(w, m, c, 2);
  // 8 peers on 2 cores: each step takes 4 times as long, stretched by the control messages
  // of the 8 peers (each watching 5) on the 2 cores, and the node's two hand-offs wait like
  // a ring step among 8 peers there.
  const double rate = 5 / w.heartbeat_seconds, crowded = 8 * rate * m.loopback.alpha_seconds / 2;
  BOOST_TEST(p.compute_seconds == 8 * 4 * m.step_seconds / (1 - crowded) + 2 * m.crowded_latency.at(8),
             boost::test_tools::tolerance(1e-9));
  c.hosts = 8;  // one peer per host: no sharing
  const double alone = rate * m.loopback.alpha_seconds / 2;
  BOOST_TEST(predict(w, m, c, 2).compute_seconds == 8 * m.step_seconds / (1 - alone) + 2 * m.handoff_seconds,
             boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(a_crowded_host_shares_the_exchange_cpu_work) {
  // CHOCO's encode, decodes and mixing passes run on every peer's node thread at once: on
  // 8 peers per 2 cores they take 4 times as long as on a host of their own.
  const Measured m = machine();
  const Workload w = mlp(ExchangeMode::gossip, "topk");
  Cluster crowded = on("10gbit", 8), alone = on("10gbit", 8);
  crowded.hosts = 1, crowded.cores_per_host = 2;
  alone.cores_per_host = 2;
  const double n = w.parameters, d = 2;  // a ring
  const double cpu = n * m.codec.encode_seconds_per_element + (d + 1) * n * m.codec.decode_seconds_per_element +
                     (d + 2) * n * m.add_seconds_per_element;
  const Prediction shared = predict(w, m, crowded, 2), own = predict(w, m, alone, 2);
  // The wire's part grows too: α by the crowded ring step, each byte by 8 peers' CPU on 2 cores.
  const double wire_extra = m.crowded_latency.at(8) - m.loopback.alpha_seconds +
                            shared.bytes_per_peer_per_round * (8 * m.loopback.cpu_seconds_per_byte / 2 - 8.0 / 10e9);
  BOOST_TEST(shared.exchange_seconds - own.exchange_seconds - wire_extra == 3 * cpu, boost::test_tools::tolerance(1e-6));
}

// On loopback, where the time per byte of all the host's peers streaming at once was
// measured, that is the wire: interpolated between measured peer counts, proportional to q
// beyond the largest.
BOOST_AUTO_TEST_CASE(a_measured_crowded_stream_is_the_loopback_wire) {
  Measured m = machine();
  const Workload w = mlp(ExchangeMode::allreduce);
  const Prediction composed = predict(w, m, on("loopback", 4), 2);
  m.crowded_seconds_per_byte = {{2, 1e-9}, {4, 3e-9}, {8, 5e-9}};
  const Prediction streamed = predict(w, m, on("loopback", 4), 2);
  const double ring_bytes = streamed.bytes_per_peer_per_round;  // 6 chunks of a quarter
  const double add = 2 * add_for(w, m, 4);  // 4 peers' reductions on 2 cores
  BOOST_TEST(streamed.exchange_seconds == 6 * m.crowded_latency.at(4) + ring_bytes * 3e-9 + add,
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(streamed.exchange_seconds > composed.exchange_seconds);
  const Prediction six = predict(w, m, on("loopback", 6), 2), sixteen = predict(w, m, on("loopback", 16), 2);
  BOOST_TEST(six.exchange_seconds - 10 * at_six_latency(m) - 3 * add_for(w, m, 6) == six.bytes_per_peer_per_round * 4e-9,
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(sixteen.exchange_seconds - 30 * m.crowded_latency.at(16) - 8 * add_for(w, m, 16) ==
                 sixteen.bytes_per_peer_per_round * 10e-9,
             boost::test_tools::tolerance(1e-6));
}

// Where the host's peers were measured training together on loopback, their round is the
// prediction's, and what it took beyond the compute is the exchange; peer counts not
// measured, and other networks, keep the link model.
BOOST_AUTO_TEST_CASE(a_measured_host_round_sets_the_loopback_exchange) {
  Measured m = machine();
  const Workload w = mlp(ExchangeMode::local_sgd, "none", 8);
  const Prediction modelled = predict(w, m, on("loopback", 8), 2);
  m.host_round_seconds = {{2, 3e-3}, {4, 20e-3}};
  const Prediction four = predict(w, m, on("loopback", 4), 2);
  BOOST_TEST(four.round_seconds == 20e-3, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(four.exchange_seconds == 20e-3 - four.compute_seconds, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(four.samples_per_second == 4 * 32 * 8 / 20e-3, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(predict(w, m, on("loopback", 8), 2).round_seconds == modelled.round_seconds, boost::test_tools::tolerance(1e-12));
  // One host of this machine's 2 cores behind a link: a slow link's exchange stands, a fast
  // one's is no shorter than the host's peers took here over loopback.
  const Measured without = machine();
  Cluster namespaced = on("10mbit:50us", 4);
  namespaced.hosts = 1, namespaced.cores_per_host = 2;
  BOOST_TEST(predict(w, m, namespaced, 2).round_seconds == predict(w, without, namespaced, 2).round_seconds,
             boost::test_tools::tolerance(1e-12));
  namespaced.network = parse_network("1000tbit:0us");
  BOOST_TEST(predict(w, without, namespaced, 2).round_seconds < 20e-3);
  BOOST_TEST(predict(w, m, namespaced, 2).round_seconds == 20e-3, boost::test_tools::tolerance(1e-9));
  namespaced.cores_per_host = 16;  // not this machine: nothing measured applies
  BOOST_TEST(predict(w, m, namespaced, 2).round_seconds == predict(w, without, namespaced, 2).round_seconds,
             boost::test_tools::tolerance(1e-12));
  // Compute that alone outlasts the measured round leaves the exchange at nothing, not less.
  m.host_round_seconds = {{2, 1e-6}};
  BOOST_TEST(predict(w, m, on("loopback", 2), 2).exchange_seconds == 0.0);
}

// Over 64 steps (19 ms at 100 Mbit/s: 240 kB) a 125 kB bucket fills: CHOCO's 40 kB a round
// leave at once, and only the messages' latency is left of its exchange; the dense
// all-reduce's megabytes are spared just the bucket's worth of wire time. Over 8 steps
// (30 kB) the bucket holds what the steps refilled.
BOOST_AUTO_TEST_CASE(a_token_bucket_spares_what_it_saved_up) {
  const Measured m = machine();
  const Workload choco = mlp(ExchangeMode::gossip, "topk", 64), dense = mlp(ExchangeMode::allreduce, "none", 64);
  const Prediction choco_wire = predict(choco, m, on("100mbit:50us", 4), 1);
  const Prediction choco_bucket = predict(choco, m, on("100mbit:50us:125kb", 4), 1);
  const Prediction choco_latency = predict(choco, m, on("1000tbit:50us", 4), 1);
  BOOST_TEST(choco_bucket.samples_per_second > choco_wire.samples_per_second);
  BOOST_TEST(choco_bucket.exchange_seconds == choco_latency.exchange_seconds, boost::test_tools::tolerance(1e-6));
  const Prediction dense_wire = predict(dense, m, on("100mbit:50us", 4), 1);
  const Prediction dense_bucket = predict(dense, m, on("100mbit:50us:125kb", 4), 1);
  const double link_only = 1.0 / 12.5e6 - 1e-9 / 2;  // 80 ns a byte, less the CPU's share (two cores at it)
  BOOST_TEST(dense_wire.exchange_seconds - dense_bucket.exchange_seconds == 125e3 * link_only, boost::test_tools::tolerance(1e-6));
  const Workload short_rounds = mlp(ExchangeMode::allreduce, "none", 8);
  const Prediction short_wire = predict(short_rounds, m, on("100mbit:50us", 4), 1);
  const Prediction short_bucket = predict(short_rounds, m, on("100mbit:50us:125kb", 4), 1);
  const double refilled = 12.5e6 * short_bucket.compute_seconds;
  BOOST_TEST(short_wire.exchange_seconds - short_bucket.exchange_seconds == refilled * link_only, boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(peer_counts_outside_the_range_are_refused) {
  BOOST_CHECK_THROW(predict(mlp(ExchangeMode::allreduce), machine(), on("10gbit", 0), 1), SpecError);
  BOOST_CHECK_THROW(predict(mlp(ExchangeMode::allreduce), machine(), on("10gbit", 1025), 1), SpecError);
}
