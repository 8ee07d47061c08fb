// A state in chunks (protocols/state_digest.h) and the messages that hand it over
// (protocols/state_transfer.h): the layout's rule and its places cover each section exactly
// once; a flipped bit anywhere changes its chunk's digest and no other, and the root; the
// root depends on the order of the chunks and on the layout; requests and chunk digests
// round-trip and every malformed one is rejected with its reason.
#define BOOST_TEST_MODULE protocols_state_transfer
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "protocols/byte_io.h"
#include "protocols/error.h"
#include "protocols/frame.h"
#include "protocols/state_digest.h"
#include "protocols/state_transfer.h"

using namespace starling::protocols;

namespace {

std::vector<float> random_state(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void flip(std::vector<float>& v, std::size_t bit) {
  auto* bytes = reinterpret_cast<unsigned char*>(v.data());
  bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
}

ByteSpan bytes(const std::vector<std::uint8_t>& v) { return {v.data(), v.size()}; }

}  // namespace

BOOST_AUTO_TEST_CASE(the_layout_rule_and_its_places_cover_each_section_once) {
  BOOST_TEST(chunk_layout(0, 0).chunk_floats == kMinChunkFloats);
  BOOST_TEST(chunk_layout(1000, 0).chunk_floats == kMinChunkFloats);  // 16 chunks would be smaller
  BOOST_TEST(chunk_layout(3000, 6000).chunk_floats == 563u);          // ⌈9000 / 16⌉
  BOOST_TEST(chunk_layout(std::uint64_t{1} << 30, 7).chunk_floats == kMaxChunkFloats);
  for (const auto& [model, shared] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {0, 0}, {1, 0}, {255, 0}, {256, 1}, {3000, 6000}, {4097, 0}, {5000, 300}, {100000, 99999}}) {
    const ChunkLayout layout = chunk_layout(model, shared);
    std::vector<int> covered_model(model, 0), covered_shared(shared, 0);
    for (std::size_t i = 0; i < layout.count(); ++i) {
      const ChunkLayout::Place p = layout.place(i);
      BOOST_TEST_REQUIRE(p.length > 0u);
      BOOST_TEST_REQUIRE(p.length <= layout.chunk_floats);
      BOOST_TEST_REQUIRE(p.offset + p.length <= (p.shared ? shared : model));  // never across sections
      BOOST_TEST(layout.index_of(p.shared, p.offset).value_or(layout.count()) == i);
      for (std::uint64_t k = p.offset; k < p.offset + p.length; ++k) ++(p.shared ? covered_shared : covered_model)[k];
    }
    for (int c : covered_model) BOOST_TEST_REQUIRE(c == 1);
    for (int c : covered_shared) BOOST_TEST_REQUIRE(c == 1);
    BOOST_TEST(!layout.index_of(false, model).has_value());  // past the end
    if (model > 1) BOOST_TEST(!layout.index_of(false, 1).has_value());  // not a chunk's start
  }
}

BOOST_AUTO_TEST_CASE(a_flipped_bit_changes_its_chunk_and_the_root_only) {
  std::vector<float> model = random_state(5000, 1), shared = random_state(3000, 2);
  const StateManifest honest = state_manifest(model, shared);
  BOOST_TEST(honest.digests.size() == honest.layout.count());
  BOOST_TEST(honest.root() == state_root(model, shared));
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const bool in_shared = trial % 3 == 0;
    std::vector<float>& section = in_shared ? shared : model;
    const std::size_t bit = rng() % (section.size() * 32);
    flip(section, bit);
    const StateManifest got = state_manifest(model, shared);
    const std::size_t wrong = *honest.layout.index_of(in_shared, (bit / 32) / honest.layout.chunk_floats * honest.layout.chunk_floats);
    for (std::size_t i = 0; i < got.digests.size(); ++i)
      BOOST_TEST_REQUIRE((got.digests[i] != honest.digests[i]) == (i == wrong), "trial " << trial << " chunk " << i);
    BOOST_TEST_REQUIRE(got.root() != honest.root());
    flip(section, bit);
  }
  BOOST_TEST(state_manifest(model, shared).root() == honest.root());
}

BOOST_AUTO_TEST_CASE(the_root_depends_on_order_and_layout) {
  // Two chunks of the same length swapped: the same digests in another order.
  std::vector<float> model = random_state(4096, 4);
  const std::uint64_t root = state_root(model, {});
  std::vector<float> swapped(model);
  std::swap_ranges(swapped.begin(), swapped.begin() + 256, swapped.begin() + 256);
  BOOST_TEST(state_root(swapped, {}) != root);
  // The same floats as model and shared state, or cut elsewhere between the two.
  std::vector<float> head(model.begin(), model.begin() + 2048), tail(model.begin() + 2048, model.end());
  BOOST_TEST(state_root(head, tail) != root);
  StateManifest m = state_manifest(model, {});
  m.layout.model_length = 4095;  // the digests with other numbers
  BOOST_TEST(m.root() != root);
}

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
  const StateManifest m = state_manifest(random_state(3000, 5), random_state(6000, 6));
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
