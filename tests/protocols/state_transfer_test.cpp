// The messages that hand a state over (protocols/state_transfer.h): requests and chunk
// digests round-trip and every malformed one is rejected with its reason; the new types are
// data frames without tensor fields.
#define BOOST_TEST_MODULE protocols_state_transfer
#include <boost/test/unit_test.hpp>

#include <vector>

#include "protocols/byte_io.h"
#include "protocols/error.h"
#include "protocols/frame.h"
#include "protocols/state_digest.h"
#include "protocols/state_transfer.h"

using namespace starling::protocols;

namespace {

std::vector<float> ramp(std::size_t n, float step) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = step * static_cast<float>(i);
  return v;
}

ByteSpan bytes(const std::vector<std::uint8_t>& v) { return {v.data(), v.size()}; }

}  // namespace

BOOST_AUTO_TEST_CASE(requests_round_trip_and_malformed_ones_are_rejected) {
  std::vector<std::uint8_t> payload;
  for (const StateRequest& r : {StateRequest{true, false, 0, 0}, StateRequest{false, true, 7, 3},
                                StateRequest{true, true, 0, 4000000000u}}) {
    encode_state_request(r, payload);
    BOOST_TEST(payload.size() == 16u);
    Result<StateRequest> got = decode_state_request(bytes(payload));
    BOOST_TEST_REQUIRE(got.ok());
    BOOST_TEST(got->digests == r.digests);
    BOOST_TEST(got->shared == r.shared);
    BOOST_TEST(got->first == r.first);
    BOOST_TEST(got->count == r.count);
  }
  encode_state_request({false, false, 3, 0}, payload);  // asks for nothing
  BOOST_TEST(to_string(decode_state_request(bytes(payload)).error()) == "bad_parameter");
  encode_state_request({true, false, 0, 1}, payload);
  payload[0] |= 4;  // an unknown flag
  BOOST_TEST(to_string(decode_state_request(bytes(payload)).error()) == "bad_parameter");
  encode_state_request({false, false, ~std::uint64_t{0}, 2}, payload);  // wraps around
  BOOST_TEST(to_string(decode_state_request(bytes(payload)).error()) == "tensor_out_of_range");
  encode_state_request({true, false, 0, 1}, payload);
  BOOST_TEST(to_string(decode_state_request({payload.data(), 15}).error()) == "truncated");
  payload.push_back(0);
  BOOST_TEST(to_string(decode_state_request(bytes(payload)).error()) == "oversized");
  BOOST_TEST(to_string(decode_state_request({}).error()) == "truncated");
}

BOOST_AUTO_TEST_CASE(chunk_digests_round_trip_and_malformed_ones_are_rejected) {
  const StateManifest m = state_manifest(ramp(3000, 0.5f), ramp(6000, -0.25f));
  std::vector<std::uint8_t> payload;
  encode_state_manifest(m, payload);
  BOOST_TEST(payload.size() == 24 + 8 * m.layout.count());
  Result<StateManifest> got = decode_state_manifest(bytes(payload));
  BOOST_TEST_REQUIRE(got.ok());
  BOOST_TEST((got->layout == m.layout));
  BOOST_TEST(got->digests == m.digests);
  BOOST_TEST(got->root() == m.root());

  BOOST_TEST(to_string(decode_state_manifest({payload.data(), 23}).error()) == "truncated");
  BOOST_TEST(to_string(decode_state_manifest({payload.data(), payload.size() - 8}).error()) == "length_mismatch");
  BOOST_TEST(to_string(decode_state_manifest({payload.data(), payload.size() - 3}).error()) == "length_mismatch");
  std::vector<std::uint8_t> longer(payload);
  longer.resize(payload.size() + 8);
  BOOST_TEST(to_string(decode_state_manifest(bytes(longer)).error()) == "length_mismatch");
  std::vector<std::uint8_t> other_size(payload);
  store_le<std::uint64_t>(other_size.data() + 16, 564);  // not the rule's chunk length
  BOOST_TEST(to_string(decode_state_manifest(bytes(other_size)).error()) == "bad_parameter");
  store_le<std::uint64_t>(other_size.data() + 16, 0);
  BOOST_TEST(to_string(decode_state_manifest(bytes(other_size)).error()) == "bad_parameter");
  std::vector<std::uint8_t> huge(payload);
  store_le<std::uint64_t>(huge.data(), ~std::uint64_t{0});  // would wrap the sum of lengths
  BOOST_TEST(to_string(decode_state_manifest(bytes(huge)).error()) == "bad_parameter");
}

BOOST_AUTO_TEST_CASE(the_new_types_are_known_data_without_tensor_fields) {
  for (MessageType t : {MessageType::state_request, MessageType::state_manifest}) {
    BOOST_TEST(is_known_message_type(static_cast<std::uint8_t>(t)));
    BOOST_TEST(!is_control_message(t));
    BOOST_TEST(!carries_tensor(t));
  }
  FrameHeader h;
  h.type = MessageType::state_request;
  std::vector<std::uint8_t> header, payload;
  encode_state_request({true, false, 0, 2}, payload);
  encode_header_for(h, bytes(payload), header);
  BOOST_TEST(parse_frame(bytes(header), bytes(payload)).ok());
  h.tensor_length = 5;  // a request carries no tensor
  encode_header_for(h, bytes(payload), header);
  BOOST_TEST(to_string(parse_frame(bytes(header), bytes(payload)).error()) == "bad_header");
}
