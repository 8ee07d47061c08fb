// libFuzzer target: the sign codec's decoder on arbitrary payload bytes.
#include "tests/protocols/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  starling::protocols::fuzz::decode_both_ways(starling::protocols::CodecId::sign, data, size);
  return 0;
}
