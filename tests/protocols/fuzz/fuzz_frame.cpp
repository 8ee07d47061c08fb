// libFuzzer target: the receive path of a whole message. Input: a 48-byte header frame
// followed by the payload frame; valid frames go on to the decoder of their type.
#include <algorithm>

#include "protocols/frame.h"
#include "protocols/membership_messages.h"
#include "protocols/state_hash_messages.h"
#include "protocols/state_transfer.h"
#include "protocols/tensor_messages.h"
#include "protocols/view_messages.h"
#include "tests/protocols/fuzz/fuzz_common.h"

using namespace starling::protocols;

namespace {

void decode_body(const FrameHeader& h, ByteSpan payload) {
  std::vector<float> model(fuzz::kMaxElements, 0.0f);
  switch (h.type) {
    case MessageType::hello: (void)decode_hello(payload); break;
    case MessageType::heartbeat: (void)decode_heartbeat(payload); break;
    case MessageType::leave: (void)decode_leave(payload); break;
    case MessageType::view: (void)decode_view(payload); break;
    case MessageType::state_hash: (void)decode_state_hash(payload); break;
    case MessageType::state_request: (void)decode_state_request(payload); break;
    case MessageType::state_manifest: {
      Result<StateManifest> m = decode_state_manifest(payload);
      if (m && m->digests.size() != m->layout.count()) __builtin_trap();  // a decoded list is one digest per chunk
      break;
    }
    case MessageType::state_transfer: {
      std::vector<float> section(std::min<std::uint64_t>(h.tensor_offset + h.tensor_length, fuzz::kMaxElements));
      if (decode_state_chunk(h, payload, section).ok()) fuzz::require_finite(section);
      break;
    }
    default: {
      if (!carries_tensor(h.type)) break;
      auto codec = make_codec(h.codec);
      if (codec && decode_tensor_message(h, payload, **codec, model, Apply::add) == Error::ok)
        fuzz::require_finite(model);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::size_t split = std::min(size, kHeaderSize);
  ByteSpan header(data, split), payload(data + split, size - split);
  // Checksums defeat blind mutation, so the body is also decoded as if its CRC were right.
  Result<FrameHeader> h = decode_header(header);
  if (!h) return 0;
  (void)verify_payload(*h, payload);
  if (payload.size() == h->payload_length) decode_body(*h, payload);
  return 0;
}
