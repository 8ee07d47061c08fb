// Writes the committed seed corpus of the protocols fuzz targets: valid payloads and frames
// of every codec and message type, which mutation then bends out of shape.
// Usage: protocols_fuzz_make_corpus tests/protocols/fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "protocols/codec_row.h"
#include "protocols/frame.h"
#include "protocols/membership_messages.h"
#include "protocols/state_hash_messages.h"
#include "protocols/state_transfer.h"
#include "protocols/tensor_messages.h"
#include "protocols/view_messages.h"

using namespace starling::protocols;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<std::uint8_t>;

void write(const fs::path& dir, int& counter, const Bytes& data) {
  fs::create_directories(dir);
  std::ofstream out(dir / ("seed_" + std::to_string(counter++)), std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

std::vector<float> gaussian(std::size_t n, unsigned seed, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Every sample of every codec row (protocols/codec_row.h) at a few lengths: corpus/codec.
void codec_seeds(const fs::path& root) {
  int counter = 0;
  for (const CodecRow* row : codec_rows())
    for (const CodecSample& sample : row->samples)
      for (std::size_t n : {0, 1, 17, 100, 1000}) {
        auto codec = make_codec(row->id, sample.options());
        std::vector<float> residual(n, 0.0f);
        Bytes payload;
        if (codec && (*codec)->encode(gaussian(n, static_cast<unsigned>(n) + 1, 1.0f), residual, payload) == Error::ok)
          write(root / "codec", counter, payload);
      }
}

Bytes frame_of(const Bytes& header, const Bytes& payload) {
  Bytes all = header;
  all.insert(all.end(), payload.begin(), payload.end());
  return all;
}

void frame_and_membership_seeds(const fs::path& root) {
  int frames = 0, members = 0;
  auto membership = [&](MessageType type, std::uint8_t selector, const Bytes& payload) {
    FrameHeader h;
    h.type = type;
    h.sender = 2;
    Bytes header;
    encode_header_for(h, payload, header);
    write(root / "frame", frames, frame_of(header, payload));
    Bytes selected = {selector};
    selected.insert(selected.end(), payload.begin(), payload.end());
    write(root / "membership", members, selected);
  };
  Bytes payload;
  encode_hello(Hello{96, {64, 32}, "tcp://127.0.0.1:5555"}, payload);
  membership(MessageType::hello, 0, payload);
  encode_heartbeat({123, 4, {}}, payload);
  membership(MessageType::heartbeat, 1, payload);
  encode_leave(LeaveReason::shutdown, payload);
  membership(MessageType::leave, 2, payload);
  encode_view(ViewMessage{ViewKind::decide, 0, 3, 40, 400, 1, {0, 1, 3}}, payload);
  membership(MessageType::view, 3, payload);

  Bytes header;
  int c = 0;
  for (const CodecRow* row : codec_rows()) {
    auto codec = make_codec(row->id);
    std::vector<float> residual(100, 0.0f);
    TensorMessage m;
    m.type = static_cast<MessageType>(static_cast<int>(MessageType::model_update) + c++ % 4);
    if (m.type == MessageType::gossip_pull) m.type = MessageType::allreduce_segment;
    m.offset = 50;
    if (encode_tensor_message(m, **codec, gaussian(100, 7, 1.0f), residual, header, payload) == Error::ok)
      write(root / "frame", frames, frame_of(header, payload));
  }
  encode_gossip_pull(3, 9, header);
  write(root / "frame", frames, header);
  StateChunk chunk;
  chunk.offset = 32;
  chunk.length = 32;
  chunk.last = true;
  if (encode_state_chunk(chunk, gaussian(64, 8, 1.0f), header, payload) == Error::ok)
    write(root / "frame", frames, frame_of(header, payload));
  encode_state_hash({0x0123456789ABCDEFull, 3, 1200}, payload);  // the earlier seeds keep their names
  membership(MessageType::state_hash, 4, payload);
  // Frames only from here on (the membership target decodes none of these).
  FrameHeader h;
  h.sender = 2;
  h.type = MessageType::state_request;
  encode_state_request({true, true, 2, 3}, payload);
  encode_header_for(h, payload, header);
  write(root / "frame", frames, frame_of(header, payload));
  h.type = MessageType::state_manifest;
  h.round = 12;
  encode_state_manifest(state_manifest(gaussian(600, 9, 1.0f), gaussian(300, 10, 1.0f)), payload);
  encode_header_for(h, payload, header);
  write(root / "frame", frames, frame_of(header, payload));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_ROOT\n", argv[0]);
    return 2;
  }
  codec_seeds(argv[1]);
  frame_and_membership_seeds(argv[1]);
  return 0;
}
