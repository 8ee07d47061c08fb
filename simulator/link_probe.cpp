// The loopback link measured through the transport the peers use: two gossip::Transports,
// each with its own context (two peer processes have one each), on 127.0.0.1.
//   α: half the median round trip of a 64-byte message;
//   β: one stream of 1 MiB messages, timed from the first send to the receiver's ack;
//   CPU per byte: process CPU time (every thread: both I/O loops, ZeroMQ, the kernel's
//   TCP work charged to them) over the bytes of that stream. On a host whose cores are all
//   busy, it is this CPU work, not the wire, that limits loopback transfers.
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"
#include "simulator/median.h"
#include "simulator/probes.h"

#include <sys/resource.h>

#include <chrono>
#include <memory>
#include <vector>

namespace starling::simulator {
namespace {

using namespace std::chrono_literals;

double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

protocols::FrameHeader push(std::size_t bytes) {
  protocols::FrameHeader h;
  h.type = protocols::MessageType::gossip_push;
  h.tensor_length = bytes / sizeof(float);
  return h;
}

struct Pair {
  gossip::TransportContext context_a, context_b;
  std::unique_ptr<gossip::Transport> a, b;
  Pair() {
    gossip::TransportOptions o;
    o.linger_ms = 0;
    o.self = 0, o.accept = {1};
    a = std::make_unique<gossip::Transport>(context_a, o);
    o.self = 1, o.accept = {0};
    b = std::make_unique<gossip::Transport>(context_b, o);
    a->connect(1, b->endpoint());
    b->connect(0, a->endpoint());
  }
  ~Pair() {
    a->stop();
    b->stop();
  }
};

double round_trip(Pair& pair, const std::vector<std::uint8_t>& payload) {
  const double t0 = now_seconds();
  pair.a->send(1, push(payload.size()), protocols::ByteSpan(payload));
  (void)pair.b->receive(5s);
  pair.b->send(0, push(payload.size()), protocols::ByteSpan(payload));
  (void)pair.a->receive(5s);
  return now_seconds() - t0;
}

}  // namespace

LoopbackLink measure_loopback() {
  Pair pair;
  LoopbackLink link;
  const std::vector<std::uint8_t> small(64, 1);
  for (int i = 0; i < 20; ++i) round_trip(pair, small);  // connections up, threads warm
  std::vector<double> trips;
  for (int i = 0; i < 200; ++i) trips.push_back(round_trip(pair, small));
  link.alpha_seconds = median(trips) / 2;

  const std::vector<std::uint8_t> big(std::size_t{1} << 20, 1);
  std::vector<double> rates, cpu;
  for (int repeat = 0; repeat < 5; ++repeat) {
    const int messages = 24;
    const double c0 = process_cpu_seconds(), t0 = now_seconds();
    for (int i = 0; i < messages; ++i) pair.a->send(1, push(big.size()), protocols::ByteSpan(big));
    for (int i = 0; i < messages; ++i) (void)pair.b->receive(5s);
    pair.b->send(0, push(small.size()), protocols::ByteSpan(small));
    (void)pair.a->receive(5s);
    const double bytes = static_cast<double>(messages) * (big.size() + protocols::kHeaderSize);
    rates.push_back(bytes / (now_seconds() - t0));
    cpu.push_back((process_cpu_seconds() - c0) / bytes);
  }
  link.beta_bytes_per_second = median(rates);
  link.cpu_seconds_per_byte = median(cpu);
  return link;
}

double measure_add_seconds_per_element(std::size_t elements) {
  std::vector<float> dst(elements, 1.f), src(elements, 0.5f);
  std::vector<double> times;
  for (int repeat = 0; repeat < 7; ++repeat) {
    const double t0 = now_seconds();
    for (std::size_t i = 0; i < elements; ++i) dst[i] += src[i];
    times.push_back((now_seconds() - t0) / static_cast<double>(elements));
  }
  volatile float sink = dst[elements / 2];
  (void)sink;
  return median(times);
}

}  // namespace starling::simulator
