// libFuzzer target: every codec's decoder (each row of protocols/codec_row.h) on arbitrary
// payload bytes. The first byte names the codec meant to read them, so mutating it moves an
// input from one decoder to another; every other decoder must refuse it.
#include "protocols/codec_row.h"
#include "tests/protocols/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const starling::protocols::CodecRow* row : starling::protocols::codec_rows())
    starling::protocols::fuzz::decode_both_ways(row->id, data, size);
  return 0;
}
