// Taking a state from seeders in checked chunks (gossip/control/model_transfer.h), on real
// ZeroMQ over 127.0.0.1: peer 0 takes the model and shared state that peers 1-3 serve from
// their control planes (each a thread that keeps receiving). It takes chunks from every
// seeder; a seeder that flips a bit in every chunk it serves is caught at its first chunk,
// counted, not asked again, and its chunks come from the others; one whose chunk digests
// differ from the agreed root is caught before any chunk; when every seeder lies the fetch
// fails with WrongState; a single seeder without an agreed digest is trusted for its own;
// malformed and excess requests are counted by the seeder and not answered, and an answer
// that reaches a peer taking no state is dropped and counted.
#define BOOST_TEST_MODULE gossip_state_transfer
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gossip/control/control_plane.h"
#include "gossip/control/model_transfer.h"
#include "gossip/transport/error.h"
#include "protocols/state_digest.h"
#include "tests/gossip/faults.h"
#include "tests/gossip/peer_group.h"

using namespace starling::gossip;
using namespace starling::gossip::testing;
using namespace std::chrono_literals;
namespace protocols = starling::protocols;

namespace {

constexpr std::size_t kModel = 20000, kShared = 9000;  // 17 chunks of up to 1813 floats
constexpr std::uint64_t kIteration = 77;

std::vector<float> values(std::size_t n, float base) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = base + 0.001f * static_cast<float>(i % 1009);
  return v;
}

enum class Seeder { honest, flips_chunks, other_state };

// Peer 0 takes; peers 1.. serve the same state (or, other_state, one with one bit flipped).
class Swarm {
 public:
  explicit Swarm(const std::vector<Seeder>& seeders)
      : group_(static_cast<int>(seeders.size()) + 1), model_(values(kModel, 1.0f)), shared_(values(kShared, -2.0f)) {
    group_.connect_all();
    for (int r = 0; r < group_.size(); ++r) {
      ControlOptions o;
      o.views = false;
      if (r > 0 && seeders[r - 1] == Seeder::flips_chunks)
        o.fault_in_served = [](std::vector<float>& chunk) { flip_low_bit(chunk[chunk.size() / 3]); };
      controls_.push_back(std::make_unique<ControlPlane>(group_.at(r), group_.ids(), o));
    }
    served_.assign(seeders.size(), model_);
    for (std::size_t s = 0; s < seeders.size(); ++s) {
      if (seeders[s] == Seeder::other_state) flip_low_bit(served_[s][kModel / 2]);
      controls_[s + 1]->serve(served_[s], kIteration, shared_);
      threads_.emplace_back([this, s] {
        Transport& t = group_.at(static_cast<int>(s) + 1);
        while (!stop_) (void)t.try_receive(Transport::Clock::now() + 20ms);
      });
    }
  }
  ~Swarm() { stop(); }

  void stop() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  Transport& taker() { return group_.at(0); }
  ControlPlane& control(int r) { return *controls_[static_cast<std::size_t>(r)]; }
  std::uint64_t root() const { return protocols::state_root(model_, shared_); }
  const std::vector<float>& model() const { return model_; }
  const std::vector<float>& shared() const { return shared_; }

 private:
  PeerGroup group_;
  std::vector<std::unique_ptr<ControlPlane>> controls_;  // destroyed before the transports
  std::vector<float> model_, shared_;
  std::vector<std::vector<float>> served_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

std::uint64_t drops(const ControlPlane& c, const std::string& reason) {
  const auto it = c.drops().find(reason);
  return it == c.drops().end() ? 0 : it->second;
}

struct Taken {
  Fetched fetched;
  std::vector<float> model = std::vector<float>(kModel, 0.0f), shared = std::vector<float>(kShared, 0.0f);
};

Taken take(Swarm& swarm, const StateSource& source) {
  Taken t;
  t.fetched = fetch_state(swarm.taker(), swarm.control(0), source, t.model, Transport::Clock::now() + 20s, t.shared);
  return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_state_comes_from_every_seeder_each_chunk_checked) {
  Swarm swarm({Seeder::honest, Seeder::honest, Seeder::honest});
  std::set<PeerId> wrong;
  const Taken t = take(swarm, StateSource{{1, 2, 3}, swarm.root(), &wrong});
  BOOST_TEST(t.model == swarm.model());
  BOOST_TEST(t.shared == swarm.shared());
  BOOST_TEST(t.fetched.iteration == kIteration);
  BOOST_TEST(t.fetched.caught.empty());
  BOOST_TEST(wrong.empty());
  std::size_t chunks = 0;
  for (PeerId p : {1u, 2u, 3u}) BOOST_TEST(t.fetched.chunks.count(p) == 1u, "no chunk from peer " << p);
  for (const auto& [peer, n] : t.fetched.chunks) chunks += n;
  BOOST_TEST(chunks == protocols::chunk_layout(kModel, kShared).count());
}

BOOST_AUTO_TEST_CASE(a_seeder_that_flips_a_bit_is_caught_and_the_others_serve_its_chunks) {
  Swarm swarm({Seeder::honest, Seeder::flips_chunks, Seeder::honest});
  std::set<PeerId> wrong;
  const Taken t = take(swarm, StateSource{{2, 1, 3}, swarm.root(), &wrong});
  BOOST_TEST(protocols::state_root(t.model, t.shared) == swarm.root());
  BOOST_TEST(t.model == swarm.model());
  BOOST_TEST(t.shared == swarm.shared());
  BOOST_TEST(wrong == (std::set<PeerId>{2}));
  BOOST_TEST_REQUIRE(t.fetched.caught.size() == 1u);
  BOOST_TEST(any_contains(t.fetched.caught, "peer 2 served chunk ", "it is not asked again"));
  BOOST_TEST(drops(swarm.control(0), "wrong_state_served") == 1u);
  BOOST_TEST(t.fetched.chunks.count(2) == 0u);
  BOOST_TEST(t.fetched.chunks.count(1) == 1u);
  BOOST_TEST(t.fetched.chunks.count(3) == 1u);
  // Caught once, never asked again: a later fetch passes it over from the start.
  const Taken again = take(swarm, StateSource{{2, 1}, swarm.root(), &wrong});
  BOOST_TEST(again.model == swarm.model());
  BOOST_TEST(again.fetched.caught.empty());
  BOOST_TEST(again.fetched.chunks.count(2) == 0u);
  BOOST_TEST(drops(swarm.control(0), "wrong_state_served") == 1u);
}

BOOST_AUTO_TEST_CASE(a_seeder_whose_digests_differ_is_caught_before_any_chunk) {
  Swarm swarm({Seeder::other_state, Seeder::honest});
  std::set<PeerId> wrong;
  const Taken t = take(swarm, StateSource{{1, 2}, swarm.root(), &wrong});
  BOOST_TEST(t.model == swarm.model());
  BOOST_TEST(wrong == (std::set<PeerId>{1}));
  BOOST_TEST(any_contains(t.fetched.caught, "peer 1 sent chunk digests of root ", "not the agreed " + digest_text(swarm.root())));
  BOOST_TEST(t.fetched.chunks.count(1) == 0u);
}

BOOST_AUTO_TEST_CASE(when_every_seeder_lies_the_fetch_fails) {
  Swarm swarm({Seeder::flips_chunks, Seeder::flips_chunks});
  std::set<PeerId> wrong;
  std::string what;
  try {
    (void)take(swarm, StateSource{{1, 2}, swarm.root(), &wrong});
  } catch (const WrongState& e) {
    what = e.what();
  }
  BOOST_TEST(what.find("no seeder handed over the state of digest " + digest_text(swarm.root())) != std::string::npos, what);
  BOOST_TEST(what.find("peer 1 served chunk ") != std::string::npos, what);
  BOOST_TEST(what.find("peer 2 served chunk ") != std::string::npos, what);
  BOOST_TEST(wrong == (std::set<PeerId>{1, 2}));
  BOOST_TEST(drops(swarm.control(0), "wrong_state_served") == 2u);
  // Seeders caught before are not asked: the fetch fails at once.
  const auto start = Transport::Clock::now();
  BOOST_CHECK_THROW((void)take(swarm, StateSource{{1, 2}, swarm.root(), &wrong}), WrongState);
  BOOST_TEST((Transport::Clock::now() - start < 1s));
}

BOOST_AUTO_TEST_CASE(a_single_seeder_is_trusted_for_its_own_digests) {
  Swarm swarm({Seeder::honest});
  const Taken t = take(swarm, trusting(1));
  BOOST_TEST(t.model == swarm.model());
  BOOST_TEST(t.shared == swarm.shared());
  BOOST_TEST(t.fetched.iteration == kIteration);
  BOOST_TEST(t.fetched.chunks.at(1) == protocols::chunk_layout(kModel, kShared).count());
  // ...and caught when its chunks do not match them.
  Swarm liar({Seeder::flips_chunks});
  BOOST_CHECK_THROW((void)take(liar, trusting(1)), WrongState);
}

BOOST_AUTO_TEST_CASE(malformed_and_excess_requests_are_counted_and_stray_answers_dropped) {
  Swarm swarm({Seeder::honest});
  Transport& taker = swarm.taker();
  auto send = [&](const std::vector<std::uint8_t>& payload) {
    protocols::FrameHeader h;
    h.type = protocols::MessageType::state_request;
    taker.send(1, h, protocols::ByteSpan(payload.data(), payload.size()));
  };
  std::vector<std::uint8_t> payload;
  protocols::encode_state_request({false, false, 0, 0}, payload);  // asks for nothing
  send(payload);
  send({1, 2, 3});                                                               // truncated
  protocols::encode_state_request({false, false, 1000, 1}, payload);  // no such chunk
  send(payload);
  protocols::encode_state_request({true, false, 0, 0}, payload);  // digests, twice within 200 ms
  send(payload);
  send(payload);
  // What came back: the one list of digests, which the taker's control plane drops, as the
  // taker takes no state now.
  std::size_t answers = 0;
  for (const auto until = Transport::Clock::now() + 1500ms; Transport::Clock::now() < until;) {
    std::optional<Message> m = taker.try_receive(Transport::Clock::now() + 20ms);
    answers += m && (m->header.type == protocols::MessageType::state_manifest ||
                     m->header.type == protocols::MessageType::state_transfer);
  }
  swarm.stop();  // the seeder's counts are final
  BOOST_TEST(answers == 0u);
  BOOST_TEST(drops(swarm.control(0), "stale_state_answer") == 1u);
  BOOST_TEST(drops(swarm.control(1), "state_request_bad_parameter") == 1u);
  BOOST_TEST(drops(swarm.control(1), "state_request_truncated") == 1u);
  BOOST_TEST(drops(swarm.control(1), "state_request_index_out_of_range") == 1u);
  BOOST_TEST(drops(swarm.control(1), "state_request_throttled") == 1u);
}
