// Payloads (gossip/transport/payload.h): bytes in place, on the heap, adopted, or held in a
// link's object; moves leave the source empty, adopted bytes are given back exactly once,
// and release() hands any of them over without losing or doubling a release.
#define BOOST_TEST_MODULE gossip_payload
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "gossip/transport/payload.h"

using starling::gossip::Payload;
using starling::protocols::ByteSpan;

namespace {

std::vector<std::uint8_t> counting(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  std::iota(v.begin(), v.end(), std::uint8_t{1});
  return v;
}

bool holds(const Payload& p, const std::vector<std::uint8_t>& bytes) {
  return p.size() == bytes.size() && (bytes.empty() || std::memcmp(p.data(), bytes.data(), bytes.size()) == 0);
}

void count_release(void*, void* hint) { ++*static_cast<int*>(hint); }

// A link's object: its own bytes, its destructions counted.
struct Box {
  explicit Box(int* destroyed) : bytes(counting(200)), destroyed(destroyed) {}
  Box(Box&& o) noexcept : bytes(std::move(o.bytes)), destroyed(o.destroyed) { o.destroyed = nullptr; }
  ~Box() {
    if (destroyed) ++*destroyed;
  }
  std::vector<std::uint8_t> bytes;
  int* destroyed;
};

Box* box(void* object) { return static_cast<Box*>(object); }
const Payload::Holder kBoxHolder{
    [](void* to, void* from) noexcept {
      new (to) Box(std::move(*box(from)));
      box(from)->~Box();
    },
    [](void* object) noexcept { box(object)->~Box(); },
    [](void* object) noexcept -> void* { return box(object)->bytes.data(); },
    [](const void*) noexcept -> const char* { return "key"; }};

}  // namespace

BOOST_AUTO_TEST_CASE(copies_of_every_size_hold_their_bytes_and_moves_empty_the_source) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, Payload::kPlaceBytes, Payload::kPlaceBytes + 1, std::size_t{1} << 20}) {
    const std::vector<std::uint8_t> bytes = counting(n);
    Payload p{ByteSpan(bytes.data(), bytes.size())};
    BOOST_TEST(holds(p, bytes));
    Payload moved(std::move(p));
    BOOST_TEST(holds(moved, bytes));
    BOOST_TEST(p.size() == 0u);
    Payload assigned(std::size_t{3});
    assigned = std::move(moved);
    BOOST_TEST(holds(assigned, bytes));
    BOOST_TEST(moved.size() == 0u);
    BOOST_TEST(assigned.sender_key() == nullptr);
  }
}

BOOST_AUTO_TEST_CASE(adopted_bytes_are_released_once_by_their_last_holder) {
  std::vector<std::uint8_t> bytes = counting(100);
  int released = 0;
  {
    Payload p(bytes.data(), bytes.size(), &count_release, &released);
    BOOST_TEST(p.data() == static_cast<void*>(bytes.data()));  // not copied
    Payload q(std::move(p));
    Payload r;
    r = std::move(q);
    BOOST_TEST(released == 0);
    BOOST_TEST(r.data() == static_cast<void*>(bytes.data()));
  }
  BOOST_TEST(released == 1);
  Payload p(bytes.data(), bytes.size(), &count_release, &released);
  p = Payload();  // assigning over adopted bytes gives them back at once
  BOOST_TEST(released == 2);
}

BOOST_AUTO_TEST_CASE(release_hands_over_adopted_bytes_without_releasing_them) {
  std::vector<std::uint8_t> bytes = counting(100);
  int released = 0;
  Payload p(bytes.data(), bytes.size(), &count_release, &released);
  const Payload::Released r = std::move(p).release();
  BOOST_TEST(p.size() == 0u);
  BOOST_TEST(r.data == static_cast<void*>(bytes.data()));
  BOOST_TEST(r.size == bytes.size());
  BOOST_TEST(released == 0);
  r.release(r.data, r.hint);
  BOOST_TEST(released == 1);
}

BOOST_AUTO_TEST_CASE(release_of_bytes_in_place_or_in_a_link_object_moves_them_to_the_heap) {
  const std::vector<std::uint8_t> small = counting(10);
  Payload p{ByteSpan(small.data(), small.size())};
  Payload::Released r = std::move(p).release();
  BOOST_REQUIRE(r.size == small.size());
  BOOST_TEST(std::memcmp(r.data, small.data(), small.size()) == 0);
  r.release(r.data, r.hint);

  int destroyed = 0;
  Payload held = Payload::hold(kBoxHolder, Box(&destroyed), 200);
  BOOST_TEST(destroyed == 0);
  r = std::move(held).release();
  BOOST_TEST(destroyed == 0);
  BOOST_TEST(r.size == 200u);
  BOOST_TEST(static_cast<const std::uint8_t*>(r.data)[199] == counting(200)[199]);
  r.release(r.data, r.hint);
  BOOST_TEST(destroyed == 1);

  const Payload::Released none = Payload().release();
  BOOST_TEST(none.size == 0u);
  BOOST_TEST(none.release == nullptr);
}

BOOST_AUTO_TEST_CASE(a_held_object_follows_its_payload_and_is_found_only_by_its_holder) {
  int destroyed = 0;
  {
    Payload p = Payload::hold(kBoxHolder, Box(&destroyed), 200);
    BOOST_TEST(holds(p, counting(200)));
    BOOST_TEST(p.sender_key() == std::string("key"));
    Payload q(std::move(p));
    BOOST_TEST(holds(q, counting(200)));
    BOOST_TEST(p.held<Box>(kBoxHolder) == nullptr);
    BOOST_REQUIRE(q.held<Box>(kBoxHolder) != nullptr);
    BOOST_TEST(q.held<Box>(kBoxHolder)->bytes.size() == 200u);
    const Payload::Holder other = kBoxHolder;
    BOOST_TEST(q.held<Box>(other) == nullptr);
    BOOST_TEST(destroyed == 0);
  }
  BOOST_TEST(destroyed == 1);
}
