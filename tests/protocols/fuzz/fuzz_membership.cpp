// libFuzzer target: hello, heartbeat, leave, view and state_hash payload decoders; the
// first byte picks one.
#include <algorithm>

#include "protocols/membership_messages.h"
#include "protocols/state_hash_messages.h"
#include "protocols/view_messages.h"

using namespace starling::protocols;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ByteSpan payload(data + 1, size - 1);
  switch (data[0] % 5) {
    case 0: {
      Result<Hello> hello = decode_hello(payload);
      if (hello) {  // what decodes must encode again to the same bytes
        std::vector<std::uint8_t> again;
        if (encode_hello(*hello, again) != Error::ok || again.size() != payload.size()) __builtin_trap();
      }
      break;
    }
    case 1: (void)decode_heartbeat(payload); break;
    case 2: (void)decode_leave(payload); break;
    case 4: {
      Result<StateHash> hash = decode_state_hash(payload);
      if (hash) {  // what decodes must encode again to the same bytes
        std::vector<std::uint8_t> again;
        encode_state_hash(*hash, again);
        if (again.size() != payload.size() || !std::equal(again.begin(), again.end(), payload.data())) __builtin_trap();
      }
      break;
    }
    default: {
      Result<ViewMessage> view = decode_view(payload);
      if (view) {  // what decodes must encode again to the same bytes
        std::vector<std::uint8_t> again;
        if (encode_view(*view, again) != Error::ok || again.size() != payload.size()) __builtin_trap();
      }
    }
  }
  return 0;
}
