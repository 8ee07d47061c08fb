// Names of the rejection reasons (protocols/error.h).
#include "protocols/error.h"

namespace starling::protocols {

std::string_view to_string(Error error) {
  switch (error) {
    case Error::ok: return "ok";
    case Error::truncated: return "truncated";
    case Error::oversized: return "oversized";
    case Error::bad_magic: return "bad_magic";
    case Error::unsupported_version: return "unsupported_version";
    case Error::unknown_message_type: return "unknown_message_type";
    case Error::unknown_codec: return "unknown_codec";
    case Error::bad_header: return "bad_header";
    case Error::crc_mismatch: return "crc_mismatch";
    case Error::codec_mismatch: return "codec_mismatch";
    case Error::length_mismatch: return "length_mismatch";
    case Error::tensor_out_of_range: return "tensor_out_of_range";
    case Error::index_out_of_range: return "index_out_of_range";
    case Error::bad_index_order: return "bad_index_order";
    case Error::non_finite: return "non_finite";
    case Error::bad_parameter: return "bad_parameter";
    case Error::bad_encoding: return "bad_encoding";
    case Error::shape_mismatch: return "shape_mismatch";
    case Error::unknown_sender: return "unknown_sender";
    case Error::unexpected_round: return "unexpected_round";
    case Error::invalid_option: return "invalid_option";
  }
  return "unknown_error";
}

}  // namespace starling::protocols
