// The shared-state digest (protocols/state_digest.h) and the state_hash message that carries
// it: equal state gives equal digests on every ISA path of the CRC, any one flipped bit
// changes it, so do changes the CRC alone cannot see, and the message round-trips and
// rejects every wrong length.
#define BOOST_TEST_MODULE protocols_state_digest
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>
#include <set>
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
