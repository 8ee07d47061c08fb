// starling_flood: floods a live peer with malformed and hostile frames, for the fault tests
// and `make faults`. It speaks ZeroMQ DEALER to the peer's ROUTER as peer --as (a peer of
// the config that is not running, so that its frames get past the sender check and are
// judged on their contents), plus a stranger and a bad routing id, cycling through every
// class the receiver must drop: unknown sender, bad routing id, one frame only, bad magic,
// wrong version, unknown type, truncated header, truncated and oversized payloads, a
// declared length over the cap, bad CRC, NaN in raw floats, and replayed old rounds (well
// formed, of view 0). Usage:
//   starling_flood --endpoint tcp://127.0.0.1:5601 --as 3 [--seconds 15] [--rate 30000]
//                  [--cap-mb 16]
// Prints how many frames of each class it sent.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "protocols/frame.h"

using namespace starling::protocols;
using Bytes = std::vector<std::uint8_t>;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string endpoint;
  std::uint32_t as = 0;
  double seconds = 15.0;
  double rate = 30000.0;  // frames per second, all classes together
  double cap_mb = 16.0;   // the victim's exchange.max_message_mb
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--endpoint") o.endpoint = value;
    else if (key == "--as") o.as = static_cast<std::uint32_t>(std::stoul(value));
    else if (key == "--seconds") o.seconds = std::stod(value);
    else if (key == "--rate") o.rate = std::stod(value);
    else if (key == "--cap-mb") o.cap_mb = std::stod(value);
    else throw std::invalid_argument("unknown option " + key);
  }
  if (o.endpoint.empty()) throw std::invalid_argument("--endpoint is required");
  return o;
}

Bytes header_for(FrameHeader h, const Bytes& payload) {
  Bytes out;
  encode_header_for(h, {payload.data(), payload.size()}, out);
  return out;
}

// A well-formed raw fp32 gossip_push of `floats` values from `sender`, round `round`.
std::pair<Bytes, Bytes> push(std::uint32_t sender, std::uint64_t round, std::size_t floats) {
  Bytes payload(floats * sizeof(float), 0);
  FrameHeader h;
  h.type = MessageType::gossip_push;
  h.sender = sender;
  h.round = round;
  h.tensor_length = floats;
  h.flags = kFlagLastChunk;
  return {header_for(h, payload), payload};
}

class Flood {
 public:
  explicit Flood(const Options& o)
      : options_(o), as_(context_, zmq::socket_type::dealer), stranger_(context_, zmq::socket_type::dealer),
        odd_(context_, zmq::socket_type::dealer) {
    setup(as_, std::to_string(o.as));
    setup(stranger_, "4000000");
    setup(odd_, "x" + std::to_string(o.as));
  }

  void run() {
    const auto end = Clock::now() + std::chrono::duration<double>(options_.seconds);
    const auto gap = std::chrono::duration<double>(1.0 / options_.rate);
    auto next = Clock::now();
    for (std::uint64_t i = 0; Clock::now() < end; ++i) {
      send_class(i);
      next += std::chrono::duration_cast<Clock::duration>(gap);
      if (next > Clock::now()) std::this_thread::sleep_until(next);
    }
    for (const auto& [name, count] : sent_) std::printf("%s %llu\n", name.c_str(), static_cast<unsigned long long>(count));
  }

 private:
  static void setup(zmq::socket_t& s, const std::string& identity) {
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::sndhwm, 1000);
    s.set(zmq::sockopt::routing_id, identity);
  }

  void connect() {
    for (zmq::socket_t* s : {&as_, &stranger_, &odd_}) s->connect(options_.endpoint);
  }

  // Drops what the peer cannot take right now: a flood does not wait.
  void send(zmq::socket_t& s, const std::string& name, const std::vector<Bytes>& frames) {
    for (std::size_t f = 0; f < frames.size(); ++f) {
      const auto flags = (f + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none) | zmq::send_flags::dontwait;
      if (!s.send(zmq::buffer(frames[f]), flags)) return;
    }
    ++sent_[name];
  }

  void send_class(std::uint64_t i) {
    if (i == 0) connect();
    auto [good, payload] = push(options_.as, 0, 16);
    switch (i % 13) {
      case 0: send(stranger_, "unknown_sender", {good, payload}); break;
      case 1: send(odd_, "bad_identity", {good, payload}); break;
      case 2: send(as_, "frame_count", {good}); break;
      case 3: { Bytes h = good; h[0] ^= 0xFF; send(as_, "bad_magic", {h, payload}); break; }
      case 4: { Bytes h = good; h[4] = kProtocolVersion + 1; send(as_, "unsupported_version", {h, payload}); break; }
      case 5: { Bytes h = good; h[5] = 200; send(as_, "unknown_message_type", {h, payload}); break; }
      case 6: send(as_, "truncated", {Bytes(good.begin(), good.begin() + 20), payload}); break;
      case 7: send(as_, "truncated", {good, Bytes(payload.begin(), payload.end() - 4)}); break;
      case 8: { Bytes p = payload; p.push_back(0); send(as_, "oversized", {good, p}); break; }
      case 9: {  // a frame over the cap, now and then (it is large)
        if (i % 130 != 9) { Bytes p = payload; p[3] ^= 1; send(as_, "crc_mismatch", {good, p}); break; }
        const std::size_t floats = static_cast<std::size_t>(options_.cap_mb * 1048576.0 / sizeof(float)) + 1024;
        auto [h, p] = push(options_.as, 0, floats);
        send(as_, "oversized", {h, p});
        break;
      }
      case 10: { Bytes p = payload; p[3] ^= 1; send(as_, "crc_mismatch", {good, p}); break; }
      case 11: {
        Bytes p = payload;
        const float nan = std::nanf("");
        std::memcpy(p.data() + 4, &nan, sizeof nan);
        FrameHeader h;
        h.type = MessageType::gossip_push, h.sender = options_.as, h.tensor_length = 16, h.flags = kFlagLastChunk;
        send(as_, "non_finite", {header_for(h, p), p});
        break;
      }
      default: {  // a replayed segment of an old round of view 0, well formed
        FrameHeader h;
        h.type = MessageType::allreduce_segment, h.sender = options_.as, h.round = i % 50, h.tensor_length = 16;
        send(as_, "replayed_old_round", {header_for(h, payload), payload});
      }
    }
  }

  Options options_;
  zmq::context_t context_;
  zmq::socket_t as_, stranger_, odd_;
  std::map<std::string, std::uint64_t> sent_;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    Flood(parse(argc, argv)).run();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "starling_flood: %s\n", e.what());
    return 2;
  }
}
