// The shared-state digest (protocols/state_digest.h) and the state_hash message that carries
// it: equal state gives equal digests on every ISA path of the CRC, any one flipped bit
// changes it, so do changes the CRC alone cannot see, and the message round-trips and
// rejects every wrong length. A state in chunks: the layout's rule and its places cover each
// section exactly once; a flipped bit anywhere changes its chunk's digest and no other, and
// the root; the root depends on the order of the chunks and on the layout.
#define BOOST_TEST_MODULE protocols_state_digest
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "platform/cpu_features.h"
#include "protocols/crc32c.h"
#include "protocols/error.h"
#include "protocols/frame.h"
#include "protocols/state_digest.h"
#include "protocols/state_hash_messages.h"
#include "tests/isa_paths.h"

using namespace starling::protocols;

namespace {

std::vector<float> random_state(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

struct IsaGuard {
  ~IsaGuard() { starling::platform::force_isa(starling::platform::detected_isa()); }
};

void flip(std::vector<float>& v, std::size_t bit) {
  auto* bytes = reinterpret_cast<unsigned char*>(v.data());
  bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
}

}  // namespace

BOOST_AUTO_TEST_CASE(equal_state_gives_equal_digests_on_every_crc_path) {
  // Ragged lengths: the 32-byte lanes, the 8-byte tail words and the padded last bytes.
  for (std::size_t n : {0u, 1u, 2u, 7u, 8u, 9u, 63u, 1000u, 4097u}) {
    const std::vector<float> a = random_state(n, 7), b = a;  // another buffer, the same bits
    std::set<std::uint64_t> seen;
    IsaGuard guard;
    for (starling::platform::Isa isa : starling::testing::supported_isas()) {
      starling::platform::force_isa(isa);
      seen.insert(digest_of(a));
      BOOST_TEST(digest_of(a) == digest_of(b));
    }
    BOOST_TEST(seen.size() == 1u, "the ISA paths disagree at length " << n);
  }
}

BOOST_AUTO_TEST_CASE(every_single_bit_flip_changes_both_halves) {
  const std::vector<float> state = random_state(37, 3);  // 148 bytes: lanes and a tail
  const std::uint64_t clean = digest_of(state);
  for (std::size_t bit = 0; bit < state.size() * 32; ++bit) {
    std::vector<float> changed = state;
    flip(changed, bit);
    const std::uint64_t d = digest_of(changed);
    BOOST_TEST_REQUIRE((d >> 32) != (clean >> 32), "the CRC half misses bit " << bit);
    BOOST_TEST_REQUIRE((d & 0xFFFFFFFFu) != (clean & 0xFFFFFFFFu), "the mix half misses bit " << bit);
  }
  // And in a model-sized state, a few bits far apart.
  const std::vector<float> big = random_state(1u << 18, 5);
  const std::uint64_t big_clean = digest_of(big);
  for (std::size_t bit : {std::size_t{0}, std::size_t{31}, std::size_t{4'000'001}, big.size() * 32 - 1}) {
    std::vector<float> changed = big;
    flip(changed, bit);
    BOOST_TEST(digest_of(changed) != big_clean);
  }
}

BOOST_AUTO_TEST_CASE(a_change_the_crc_cannot_see_still_changes_the_digest) {
  // CRC is linear: a message that differs from another by a multiple of the polynomial
  // keeps its CRC. The 33 bits of the CRC-32C polynomial (0x1EDC6F41 with x^32) laid into
  // the bit stream, in the order the reflected CRC reads them, are such a difference.
  const std::uint64_t poly = 0x11EDC6F41ull;
  const std::vector<float> a = random_state(16, 11);
  std::vector<float> b = a;
  for (int k = 0; k <= 32; ++k)
    if ((poly >> k) & 1u) flip(b, static_cast<std::size_t>(200 + 32 - k));
  BOOST_TEST_REQUIRE(a != b);
  BOOST_TEST_REQUIRE(crc32c(a.data(), a.size() * 4) == crc32c(b.data(), b.size() * 4));  // the CRC is blind here
  BOOST_TEST((digest_of(a) & 0xFFFFFFFFu) != (digest_of(b) & 0xFFFFFFFFu));  // the mix is not
}

BOOST_AUTO_TEST_CASE(the_split_between_spans_counts) {
  const std::vector<float> x = random_state(10, 1), u = random_state(10, 2);
  StateDigest xu, ux, again;
  xu.add(x), xu.add(u);
  ux.add(u), ux.add(x);
  again.add(x), again.add(u);
  BOOST_TEST(xu.value() == again.value());
  BOOST_TEST(xu.value() != ux.value());
  std::vector<float> joined(x);
  joined.insert(joined.end(), u.begin(), u.end());
  BOOST_TEST(digest_of(joined) != xu.value());  // the mix half sees where a span ends
}

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

BOOST_AUTO_TEST_CASE(state_hash_message_round_trip_and_malformed) {
  const StateHash sent{0x0123456789ABCDEFull, 3, 1200};
  std::vector<std::uint8_t> payload;
  encode_state_hash(sent, payload);
  BOOST_TEST(payload.size() == kStateHashPayloadSize);
  const Result<StateHash> got = decode_state_hash({payload.data(), payload.size()});
  BOOST_TEST_REQUIRE(got.ok());
  BOOST_TEST(got->digest == sent.digest);
  BOOST_TEST(got->view == sent.view);
  BOOST_TEST(got->iteration == sent.iteration);
  BOOST_TEST(to_string(decode_state_hash({payload.data(), payload.size() - 1}).error()) == "truncated");
  payload.push_back(0);
  BOOST_TEST(to_string(decode_state_hash({payload.data(), payload.size()}).error()) == "oversized");
  BOOST_TEST(is_control_message(MessageType::state_hash));
  BOOST_TEST(is_known_message_type(static_cast<std::uint8_t>(MessageType::state_hash)));
}
