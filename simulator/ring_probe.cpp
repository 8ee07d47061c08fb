// Latency of a crowded host: `peers` transports in a ring, all shifting a small message at
// once, as the peers of an all-reduce on one machine do in every step. Each peer is a
// thread with its own transport context (its own I/O thread), so the host runs three threads
// per peer, as peer processes do; when they outnumber the cores, each step waits for
// context switches, and that is what this measures.
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"
#include "simulator/median.h"
#include "simulator/probes.h"

#include <condition_variable>
#include <algorithm>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace starling::simulator {
namespace {

using namespace std::chrono_literals;

struct RingPeer {
  gossip::TransportContext context;
  std::unique_ptr<gossip::Transport> transport;
};

protocols::FrameHeader token(std::uint64_t round, std::size_t bytes) {
  protocols::FrameHeader h;
  h.type = protocols::MessageType::gossip_push;
  h.round = round;
  h.tensor_length = static_cast<std::uint32_t>(bytes / sizeof(float));
  return h;
}

}  // namespace

double measure_ring_step_seconds(int peers, std::size_t payload_bytes) {
  const int p = std::clamp(peers, 2, 16);
  std::vector<std::unique_ptr<RingPeer>> ring;
  for (int r = 0; r < p; ++r) {
    ring.push_back(std::make_unique<RingPeer>());
    gossip::TransportOptions o;
    o.self = static_cast<gossip::PeerId>(r);
    o.linger_ms = 0;
    o.accept = {static_cast<gossip::PeerId>((r + p - 1) % p)};
    ring.back()->transport = std::make_unique<gossip::Transport>(ring.back()->context, o);
  }
  for (int r = 0; r < p; ++r)
    ring[r]->transport->connect(static_cast<gossip::PeerId>((r + 1) % p), ring[(r + 1) % p]->transport->endpoint());
  const std::vector<std::uint8_t> payload(std::max<std::size_t>(payload_bytes, 1), 1);
  const bool bulk = payload.size() > (64 << 10);  // megabytes a step: fewer steps suffice
  const int warm = bulk ? 2 : 10, rounds = bulk ? 10 : 60;
  std::vector<double> per_step(static_cast<std::size_t>(p));
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      auto& t = *ring[r]->transport;
      const auto right = static_cast<gossip::PeerId>((r + 1) % p);
      double start = 0;
      for (int i = 0; i < warm + rounds; ++i) {
        if (i == warm) start = now_seconds();
        t.send(right, token(static_cast<std::uint64_t>(i), payload.size()), protocols::ByteSpan(payload));
        (void)t.receive(10s);
      }
      per_step[static_cast<std::size_t>(r)] = (now_seconds() - start) / rounds;
    });
  for (auto& t : threads) t.join();
  for (auto& peer : ring) peer->transport->stop();
  return median(per_step);
}

double measure_handoff_seconds() {
  std::mutex mutex;
  std::condition_variable cv;
  int turn = 0;  // 0: main's, 1: the other thread's
  const int trips = 400;
  std::thread other([&] {
    for (int i = 0; i < trips; ++i) {
      std::unique_lock<std::mutex> lock(mutex);
      cv.wait(lock, [&] { return turn == 1; });
      turn = 0;
      cv.notify_all();
    }
  });
  std::vector<double> times;
  for (int i = 0; i < trips; ++i) {
    const double t0 = now_seconds();
    std::unique_lock<std::mutex> lock(mutex);
    turn = 1;
    cv.notify_all();
    cv.wait(lock, [&] { return turn == 0; });
    times.push_back((now_seconds() - t0) / 2);
  }
  other.join();
  return median(times);
}

}  // namespace starling::simulator
