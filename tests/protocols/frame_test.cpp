// Frame header, CRC-32C (on every ISA path, forced with force_isa) and message-family tests:
// round trips and every rejection class.
#define BOOST_TEST_MODULE protocols_frame
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>
#include <set>
#include <string>

#include "platform/cpu_features.h"
#include "tests/isa_paths.h"
#include "protocols/byte_io.h"
#include "protocols/codec_row.h"
#include "protocols/crc32c.h"
#include "protocols/frame.h"
#include "protocols/outer_plan_messages.h"
#include "protocols/membership_messages.h"
#include "protocols/state_transfer.h"
#include "protocols/tensor_messages.h"
#include "protocols/view_messages.h"

using namespace starling::protocols;
namespace isa = starling::platform;

namespace {

// The ISA levels this CPU has: table (scalar), folding or the crc32 instruction (avx2,
// neon), folding (avx512).
std::vector<isa::Isa> crc_paths() { return starling::testing::supported_isas(); }

struct IsaGuard {
  ~IsaGuard() { isa::force_isa(isa::detected_isa()); }
};

std::vector<std::uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

FrameHeader sample_header() {
  FrameHeader h;
  h.type = MessageType::gossip_push;
  h.codec = codec_row("threshold")->id;
  h.flags = kFlagLastChunk;
  h.sender = 7;
  h.round = 123456789012ull;
  h.tensor_offset = 1000;
  h.tensor_length = 5000;
  return h;
}

// A valid header frame for payload, then `edit` applied to its bytes.
template <class Edit>
std::vector<std::uint8_t> edited_header(const std::vector<std::uint8_t>& payload, Edit edit) {
  std::vector<std::uint8_t> header;
  encode_header_for(sample_header(), payload, header);
  edit(header);
  return header;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(crc)

BOOST_AUTO_TEST_CASE(known_vectors) {
  IsaGuard guard;
  const auto check = bytes_of("123456789");
  BOOST_TEST(crc32c_table(check.data(), check.size()) == 0xE3069283u);
  std::vector<std::uint8_t> zeros(32, 0), ones(32, 0xFF), inc(32);
  for (int i = 0; i < 32; ++i) inc[i] = static_cast<std::uint8_t>(i);
  for (isa::Isa path : crc_paths()) {
    BOOST_TEST_CONTEXT(isa::isa_name(path)) {
      isa::force_isa(path);
      BOOST_TEST(crc32c(check.data(), check.size()) == 0xE3069283u);
      BOOST_TEST(crc32c(nullptr, 0) == 0u);
      BOOST_TEST(crc32c(zeros.data(), 32) == 0x8A9136AAu);  // RFC 3720 B.4
      BOOST_TEST(crc32c(ones.data(), 32) == 0x62A8AB43u);
      BOOST_TEST(crc32c(inc.data(), 32) == 0x46DD794Eu);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_path_matches_table_and_chains) {
  IsaGuard guard;
  std::mt19937 rng(1);
  std::vector<std::uint8_t> data(100000);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  for (isa::Isa path : crc_paths()) {
    BOOST_TEST_CONTEXT(isa::isa_name(path)) {
      isa::force_isa(path);
      for (std::size_t len : {0, 1, 7, 8, 9, 63, 4095, 12287, 12288, 12289, 40000, 100000}) {
        const std::uint32_t whole = crc32c(data.data(), len);
        BOOST_TEST(whole == crc32c_table(data.data(), len));
        const std::size_t cut = len / 3;
        BOOST_TEST(whole == crc32c(data.data() + cut, len - cut, crc32c(data.data(), cut)));
      }
    }
  }
}

// Every length around the folding path's 64- and 256-byte steps and the crc32 path's
// 8-byte words, at odd alignments, and continuing from a previous CRC.
BOOST_AUTO_TEST_CASE(every_path_matches_table_at_every_length) {
  IsaGuard guard;
  std::mt19937 rng(2);
  std::vector<std::uint8_t> data(2000);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  for (isa::Isa path : crc_paths()) {
    isa::force_isa(path);
    int mismatches = 0;
    for (std::size_t len = 0; len < 1100; ++len)
      for (std::size_t offset : {0, 1, 13})
        for (std::uint32_t previous : {0u, 0x9E3779B9u})
          mismatches +=
              crc32c(data.data() + offset, len, previous) != crc32c_table(data.data() + offset, len, previous);
    BOOST_TEST(mismatches == 0, isa::isa_name(path));
  }
}

// Every implementation this CPU can run, including those no forced ISA level reaches here
// (the crc32 instruction where VPCLMULQDQ folds at avx2): random lengths up to 64 KiB with
// ragged ends, at random offsets, continuing from random CRCs.
BOOST_AUTO_TEST_CASE(every_implementation_matches_table_on_random_lengths) {
  std::mt19937 rng(3);
  std::vector<std::uint8_t> data(70000);
  for (auto& b : data) b = static_cast<std::uint8_t>(rng());
  const std::vector<Crc32cPath> paths = crc32c_paths();
  BOOST_TEST_REQUIRE(std::string(paths.front().name) == "table");
  for (const Crc32cPath& path : paths) {
    int mismatches = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      const std::size_t offset = rng() % 64;
      const std::size_t len = rng() % (std::size_t{1} << (rng() % 17));
      const std::uint32_t previous = trial % 2 ? static_cast<std::uint32_t>(rng()) : 0u;
      mismatches += path.fn(data.data() + offset, len, previous) != crc32c_table(data.data() + offset, len, previous);
    }
    BOOST_TEST(mismatches == 0, path.name);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(header)

BOOST_AUTO_TEST_CASE(round_trip) {
  const auto payload = bytes_of("payload bytes");
  std::vector<std::uint8_t> header;
  encode_header_for(sample_header(), payload, header);
  BOOST_TEST(header.size() == kHeaderSize);
  BOOST_TEST(load_le<std::uint32_t>(header.data()) == kFrameMagic);
  auto parsed = parse_frame(header, payload);
  BOOST_TEST_REQUIRE(parsed.ok());
  const FrameHeader h = *parsed;
  const FrameHeader want = sample_header();
  BOOST_TEST(static_cast<int>(h.type) == static_cast<int>(want.type));
  BOOST_TEST(static_cast<int>(h.codec) == static_cast<int>(want.codec));
  BOOST_TEST(h.flags == want.flags);
  BOOST_TEST(h.sender == want.sender);
  BOOST_TEST(h.round == want.round);
  BOOST_TEST(h.tensor_offset == want.tensor_offset);
  BOOST_TEST(h.tensor_length == want.tensor_length);
  BOOST_TEST(h.payload_length == payload.size());
}

BOOST_AUTO_TEST_CASE(rejects_every_malformed_class) {
  const auto payload = bytes_of("some payload");
  auto expect = [&](const std::vector<std::uint8_t>& header, ByteSpan body, Error want) {
    BOOST_TEST(to_string(parse_frame(header, body).error()) == to_string(want));
  };
  auto valid = edited_header(payload, [](auto&) {});
  std::vector<std::uint8_t> shorter(valid.begin(), valid.end() - 1), longer = valid;
  longer.push_back(0);
  expect(shorter, payload, Error::truncated);
  expect(longer, payload, Error::oversized);
  expect(edited_header(payload, [](auto& h) { h[0] ^= 1; }), payload, Error::bad_magic);
  expect(edited_header(payload, [](auto& h) { h[4] = kProtocolVersion + 1; }), payload, Error::unsupported_version);
  expect(edited_header(payload, [](auto& h) { h[4] = 0; }), payload, Error::unsupported_version);
  expect(edited_header(payload, [](auto& h) { h[5] = 0; }), payload, Error::unknown_message_type);
  expect(edited_header(payload, [](auto& h) { h[5] = 15; }), payload, Error::unknown_message_type);
  for (int id = 0; id < 256; ++id)  // every codec byte no codec row names
    if (!codec_row(static_cast<CodecId>(id)))
      expect(edited_header(payload, [id](auto& h) { h[6] = static_cast<std::uint8_t>(id); }), payload, Error::unknown_codec);
  expect(edited_header(payload, [](auto& h) { h[7] = kFlagAllGather; }), payload, Error::bad_header);
  expect(edited_header(payload, [](auto& h) { h[44] = 1; }), payload, Error::bad_header);
  // Tensor fields on a message without a tensor.
  expect(edited_header(payload, [](auto& h) { h[5] = static_cast<std::uint8_t>(MessageType::heartbeat); }), payload,
         Error::bad_header);
  // Offset + length wrapping around 2^64.
  expect(edited_header(payload, [](auto& h) { store_le<std::uint64_t>(h.data() + 24, ~0ull); }), payload,
         Error::bad_header);
  expect(edited_header(payload, [](auto& h) { store_le<std::uint32_t>(h.data() + 40, 0xFFFFFFFFu); }), payload,
         Error::oversized);
  ByteSpan body(payload.data(), payload.size() - 1);
  expect(valid, body, Error::truncated);
  auto more = payload;
  more.push_back('!');
  expect(valid, more, Error::oversized);
  auto flipped = payload;
  flipped[3] ^= 0x10;
  expect(valid, flipped, Error::crc_mismatch);
  FrameLimits tight;
  tight.max_payload = 4;
  BOOST_TEST(to_string(decode_header(valid, tight).error()) == "oversized");
}

BOOST_AUTO_TEST_CASE(origin_checks) {
  FrameHeader h = sample_header();
  const std::vector<std::uint32_t> known = {1, 7, 9};
  BOOST_TEST(to_string(check_origin(h, known, 0, ~0ull)) == "ok");
  BOOST_TEST(to_string(check_origin(h, known, h.round + 1, ~0ull)) == "unexpected_round");
  h.sender = 8;
  BOOST_TEST(to_string(check_origin(h, known, 0, ~0ull)) == "unknown_sender");
}

BOOST_AUTO_TEST_CASE(error_names_are_distinct) {
  std::set<std::string> names;
  for (int e = 0; e <= static_cast<int>(Error::invalid_option); ++e) {
    const std::string name(to_string(static_cast<Error>(e)));
    BOOST_TEST(name != "unknown_error");
    names.insert(name);
  }
  BOOST_TEST(names.size() == static_cast<std::size_t>(Error::invalid_option) + 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(membership)

BOOST_AUTO_TEST_CASE(hello_round_trip_and_shape_check) {
  Hello hello{300, {100, 150, 50}, "tcp://127.0.0.1:5555"};
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(encode_hello(hello, payload)) == "ok");
  auto back = decode_hello(payload);
  BOOST_TEST_REQUIRE(back.ok());
  BOOST_TEST(back->endpoint == hello.endpoint);
  BOOST_TEST(back->tensor_sizes == hello.tensor_sizes);
  BOOST_TEST(to_string(check_shape(*back, hello)) == "ok");
  Hello other = hello;
  other.tensor_sizes = {150, 100, 50};
  BOOST_TEST(to_string(check_shape(other, hello)) == "shape_mismatch");
}

BOOST_AUTO_TEST_CASE(hello_rejects_malformed) {
  Hello hello{300, {100, 200}, "tcp://x:1"};
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(encode_hello(hello, payload)) == "ok");
  BOOST_TEST(to_string(decode_hello(ByteSpan(payload.data(), payload.size() - 1)).error()) == "truncated");
  auto longer = payload;
  longer.push_back(0);
  BOOST_TEST(to_string(decode_hello(longer).error()) == "oversized");
  auto wrong_sum = payload;
  store_le<std::uint64_t>(wrong_sum.data(), 301);
  BOOST_TEST(to_string(decode_hello(wrong_sum).error()) == "bad_parameter");
  auto huge_count = payload;
  store_le<std::uint32_t>(huge_count.data() + 8, 0xFFFFFFFFu);
  BOOST_TEST(to_string(decode_hello(huge_count).error()) == "bad_parameter");
  auto control = payload;
  control.back() = '\n';
  BOOST_TEST(to_string(decode_hello(control).error()) == "bad_encoding");
  Hello bad{10, {3}, ""};
  BOOST_TEST(to_string(encode_hello(bad, payload)) == "invalid_option");
}

BOOST_AUTO_TEST_CASE(heartbeat_and_leave) {
  std::vector<std::uint8_t> payload;
  encode_heartbeat({42, 7, {}}, payload);
  auto hb = decode_heartbeat(payload);
  BOOST_TEST_REQUIRE(hb.ok());
  BOOST_TEST(hb->clock_ns == 42u);
  BOOST_TEST(hb->last_round == 7u);
  BOOST_TEST(to_string(decode_heartbeat(ByteSpan(payload.data(), 15)).error()) == "truncated");
  Heartbeat with_notices{1, 2, {{5, NoticeKind::finished, 9, 300}, {6, NoticeKind::timed_out, 0, 0}}};
  encode_heartbeat(with_notices, payload);
  BOOST_TEST(payload.size() == 16u + 4u + 2u * 21u);
  hb = decode_heartbeat(payload);
  BOOST_TEST_REQUIRE(hb.ok());
  BOOST_TEST_REQUIRE(hb->notices.size() == 2u);
  BOOST_TEST(hb->notices[0].peer == 5u);
  BOOST_TEST((hb->notices[0].kind == NoticeKind::finished));
  BOOST_TEST(hb->notices[0].round == 9u);
  BOOST_TEST(hb->notices[0].iteration == 300u);
  BOOST_TEST((hb->notices[1].kind == NoticeKind::timed_out));
  BOOST_TEST(to_string(decode_heartbeat(ByteSpan(payload.data(), payload.size() - 1)).error()) == "truncated");
  payload.push_back(0);
  BOOST_TEST(to_string(decode_heartbeat(payload).error()) == "oversized");
  payload.pop_back();
  payload[16 + 4 + 4] = 7;  // no such kind
  BOOST_TEST(to_string(decode_heartbeat(payload).error()) == "bad_parameter");
  store_le<std::uint32_t>(payload.data() + 16, 0);
  BOOST_TEST(to_string(decode_heartbeat(payload).error()) == "bad_parameter");
  encode_leave(LeaveReason::evicted, payload);
  BOOST_TEST(static_cast<int>(*decode_leave(payload)) == static_cast<int>(LeaveReason::evicted));
  store_le<std::uint32_t>(payload.data(), 99);
  BOOST_TEST(to_string(decode_leave(payload).error()) == "bad_parameter");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tensor_family)

BOOST_AUTO_TEST_CASE(view_round_trip_and_malformed) {
  ViewMessage decide{ViewKind::decide, 0, 5, 120, 960, 2, {0, 2, 3}};
  std::vector<std::uint8_t> payload;
  BOOST_TEST_REQUIRE(to_string(encode_view(decide, payload)) == "ok");
  BOOST_TEST(payload.size() == 40u + 12u);
  auto back = decode_view(payload);
  BOOST_TEST_REQUIRE(back.ok());
  BOOST_TEST((back->kind == ViewKind::decide));
  BOOST_TEST(back->view == 5u);
  BOOST_TEST(back->round == 120u);
  BOOST_TEST(back->iteration == 960u);
  BOOST_TEST(back->source == 2u);
  BOOST_TEST(back->peers == decide.peers);
  BOOST_TEST(to_string(decode_view(ByteSpan(payload.data(), 39)).error()) == "truncated");
  BOOST_TEST(to_string(decode_view(ByteSpan(payload.data(), payload.size() - 1)).error()) == "truncated");
  auto longer = payload;
  longer.push_back(0);
  BOOST_TEST(to_string(decode_view(longer).error()) == "oversized");
  auto unsorted = payload;
  unsorted[44] = 9;  // second id above the third
  BOOST_TEST(to_string(decode_view(unsorted).error()) == "bad_index_order");
  auto kind = payload;
  kind[0] = 7;
  BOOST_TEST(to_string(decode_view(kind).error()) == "bad_parameter");
  auto flagged = payload;
  flagged[1] = kViewFinished;  // flags only on a status
  BOOST_TEST(to_string(decode_view(flagged).error()) == "bad_header");
  auto reserved = payload;
  reserved[36] = 1;
  BOOST_TEST(to_string(decode_view(reserved).error()) == "bad_header");
  auto huge = payload;
  huge[6] = 0xFF;  // peer count far above the limit
  BOOST_TEST(to_string(decode_view(huge).error()) == "bad_parameter");
  ViewMessage prepare{ViewKind::prepare, 0, 5, 0, 0, 0, {1}};
  BOOST_TEST(to_string(encode_view(prepare, payload)) == "invalid_option");
  ViewMessage status{ViewKind::status, kViewFinished | kViewJoining, 4, 7, 70, 0, {1, 2}};
  BOOST_TEST_REQUIRE(to_string(encode_view(status, payload)) == "ok");
  BOOST_TEST(decode_view(payload)->flags == (kViewFinished | kViewJoining));
}

BOOST_AUTO_TEST_CASE(update_round_trip_through_frame) {
  std::vector<float> model(1000, 0.0f), values(200), residual(200, 0.0f);
  for (int i = 0; i < 200; ++i) values[i] = 0.01f * static_cast<float>(i - 100);
  auto codec = make_codec("none");
  BOOST_TEST_REQUIRE(codec.ok());
  TensorMessage m;
  m.type = MessageType::model_update;
  m.sender = 3;
  m.round = 9;
  m.offset = 500;
  m.flags = kFlagLastChunk;
  std::vector<std::uint8_t> header, payload;
  BOOST_TEST_REQUIRE(to_string(encode_tensor_message(m, **codec, values, residual, header, payload)) == "ok");
  auto h = parse_frame(header, payload);
  BOOST_TEST_REQUIRE(h.ok());
  BOOST_TEST(to_string(decode_tensor_message(*h, payload, **codec, model, Apply::add)) == "ok");
  for (int i = 0; i < 200; ++i) BOOST_TEST(model[500 + i] == values[i]);
  BOOST_TEST(model[499] == 0.0f);

  auto fp16 = make_codec("fp16");
  BOOST_TEST(to_string(decode_tensor_message(*h, payload, **fp16, model, Apply::add)) == "codec_mismatch");
  std::vector<float> small(600);
  BOOST_TEST(to_string(decode_tensor_message(*h, payload, **codec, small, Apply::add)) == "tensor_out_of_range");
  FrameHeader shorter = *h;
  shorter.tensor_length = 100;
  BOOST_TEST(to_string(decode_tensor_message(shorter, payload, **codec, model, Apply::add)) == "length_mismatch");
  m.flags = kFlagAllGather;
  BOOST_TEST(to_string(encode_tensor_message(m, **codec, values, residual, header, payload)) == "invalid_option");
}

BOOST_AUTO_TEST_CASE(gossip_pull_has_empty_payload) {
  std::vector<std::uint8_t> header;
  encode_gossip_pull(4, 11, header);
  auto h = parse_frame(header, ByteSpan{});
  BOOST_TEST_REQUIRE(h.ok());
  BOOST_TEST(static_cast<int>(h->type) == static_cast<int>(MessageType::gossip_pull));
}

BOOST_AUTO_TEST_CASE(state_transfer_chunks) {
  std::vector<float> state(1000), received(1000, -1.0f);
  for (int i = 0; i < 1000; ++i) state[i] = static_cast<float>(i) * 0.5f;
  for (std::uint64_t offset = 0; offset < 1000; offset += 300) {
    StateChunk chunk;
    chunk.offset = offset;
    chunk.length = std::min<std::uint64_t>(300, 1000 - offset);
    chunk.last = offset + chunk.length == 1000;
    std::vector<std::uint8_t> header, payload;
    BOOST_TEST_REQUIRE(to_string(encode_state_chunk(chunk, state, header, payload)) == "ok");
    auto h = parse_frame(header, payload);
    BOOST_TEST_REQUIRE(h.ok());
    auto got = decode_state_chunk(*h, payload, received);
    BOOST_TEST_REQUIRE(got.ok());
    BOOST_TEST(got->last == chunk.last);
    FrameHeader lossy = *h;
    lossy.codec = codec_row("fp16")->id;
    BOOST_TEST(to_string(decode_state_chunk(lossy, payload, received).error()) == "codec_mismatch");
    std::vector<float> wrong(999);
    BOOST_TEST(to_string(decode_state_chunk(*h, payload, wrong).error()) == "length_mismatch");
  }
  BOOST_TEST(received == state);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(control_messages_are_the_membership_and_view_types) {
  using T = MessageType;
  for (T t : {T::hello, T::heartbeat, T::leave, T::view, T::state_hash}) BOOST_TEST(is_control_message(t));
  for (T t : {T::model_update, T::gossip_push, T::gossip_pull, T::gossip_pull_reply, T::allreduce_segment,
              T::state_transfer, T::state_request, T::state_manifest, T::outer_plan})
    BOOST_TEST(!is_control_message(t));
  std::vector<std::uint8_t> head;
  FrameHeader h;
  h.type = T::view;
  encode_header(h, head);
  BOOST_TEST(is_control_frame({head.data(), head.size()}));
  h.type = T::allreduce_segment;
  encode_header(h, head);
  BOOST_TEST(!is_control_frame({head.data(), head.size()}));
  BOOST_TEST(!is_control_frame({head.data(), 3}));  // too short to say
}

BOOST_AUTO_TEST_CASE(outer_plans_round_trip_and_refuse_bad_sizes_and_times) {
  const OuterPlan sent{0x0000000300000007ull, kNoMoreRounds, 1200, 0.25};
  std::vector<std::uint8_t> payload;
  encode_outer_plan(sent, payload);
  BOOST_TEST(payload.size() == kOuterPlanPayloadSize);
  const Result<OuterPlan> got = decode_outer_plan({payload.data(), payload.size()});
  BOOST_TEST_REQUIRE(got.ok());
  BOOST_TEST(got->base == sent.base);
  BOOST_TEST(got->next == sent.next);
  BOOST_TEST(got->iteration == sent.iteration);
  BOOST_TEST(got->compute_seconds == sent.compute_seconds);
  BOOST_TEST(to_string(decode_outer_plan({payload.data(), payload.size() - 1}).error()) == "truncated");
  payload.push_back(0);
  BOOST_TEST(to_string(decode_outer_plan({payload.data(), payload.size()}).error()) == "oversized");
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    encode_outer_plan({1, 2, 3, bad}, payload);
    BOOST_TEST(to_string(decode_outer_plan({payload.data(), payload.size()}).error()) == "invalid_option");
  }
}
