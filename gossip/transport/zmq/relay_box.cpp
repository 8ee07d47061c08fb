// Boxes for relayed frames (gossip/transport/zmq/relay_box.h).
#include "gossip/transport/zmq/relay_box.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <sodium.h>

#include "gossip/transport/error.h"
#include "protocols/byte_io.h"

namespace starling::gossip {

namespace {

constexpr std::size_t kKey = crypto_box_PUBLICKEYBYTES, kNonce = crypto_box_NONCEBYTES, kMac = crypto_box_MACBYTES;
constexpr std::size_t kSessionBytes = 16, kLength = 4;
// Sessions of one origin remembered (a restarted origin starts a new one).
constexpr std::size_t kSessionsKept = 8;
static_assert(kNonce == kSessionBytes + 8);

bool decode_key(const std::string& z85, unsigned char* raw) {
  return z85.size() == kZ85KeyLength && zmq_z85_decode(raw, z85.c_str()) != nullptr;
}

std::string encode_key(const unsigned char* raw) {
  char text[kZ85KeyLength + 1];
  return zmq_z85_encode(text, raw, kKey) ? std::string(text) : std::string();
}

}  // namespace

RelayBox::RelayBox(const CurveKeyPair& own) {
  if (sodium_init() < 0) STARLING_GOSSIP_THROW(IoError, "libsodium cannot start");
  if (!decode_key(own.public_key, public_.data()) || !decode_key(own.secret_key, secret_.data()))
    STARLING_GOSSIP_THROW(InvalidArgument, "relay box: this peer's CURVE keys are not Z85");
  randombytes_buf(session_.data(), session_.size());
}

RelayBox::Key RelayBox::shared_key(const Key& peer) const {
  Key k{};
  if (crypto_box_beforenm(k.data(), peer.data(), secret_.data()) != 0) k.fill(0);  // a weak key: no box opens
  return k;
}

const RelayBox::Key& RelayBox::shared_with(const Key& peer) {
  auto it = shared_.find(peer);
  return it != shared_.end() ? it->second : shared_.emplace(peer, shared_key(peer)).first->second;
}

std::optional<zmq::message_t> RelayBox::seal(const std::string& to_key, const zmq::message_t& header,
                                             const zmq::message_t& payload) {
  Key to{};
  if (!decode_key(to_key, to.data())) return std::nullopt;
  const std::size_t plain_size = kLength + header.size() + payload.size();
  std::vector<unsigned char> plain(plain_size);
  protocols::store_le<std::uint32_t>(plain.data(), static_cast<std::uint32_t>(header.size()));
  std::memcpy(plain.data() + kLength, header.data(), header.size());
  if (payload.size()) std::memcpy(plain.data() + kLength + header.size(), payload.data(), payload.size());
  zmq::message_t box(kKey + kNonce + kMac + plain_size);
  auto* out = static_cast<unsigned char*>(box.data());
  std::memcpy(out, public_.data(), kKey);
  std::memcpy(out + kKey, session_.data(), kSessionBytes);
  protocols::store_le<std::uint64_t>(out + kKey + kSessionBytes, ++made_);
  crypto_box_easy_afternm(out + kKey + kNonce, plain.data(), plain.size(), out + kKey, shared_with(to).data());
  return box;
}

std::optional<RelayBox::Opened> RelayBox::open(PeerId from, const std::string* bound, const zmq::message_t& box,
                                               std::string& why) {
  why = "relay_box_failed";
  if (box.size() < kKey + kNonce + kMac + kLength) return std::nullopt;
  const auto* in = static_cast<const unsigned char*>(box.data());
  Key origin{};
  std::memcpy(origin.data(), in, kKey);
  Opened opened;
  opened.key = encode_key(origin.data());
  if (bound && *bound != opened.key) return why = "key_mismatch", std::nullopt;
  const unsigned char* nonce = in + kKey;
  std::vector<unsigned char> plain(box.size() - kKey - kNonce - kMac);
  const Key shared = bound ? shared_with(origin) : shared_key(origin);
  if (crypto_box_open_easy_afternm(plain.data(), nonce + kNonce, box.size() - kKey - kNonce, nonce, shared.data()) != 0)
    return std::nullopt;
  const std::uint32_t header_size = protocols::load_le<std::uint32_t>(plain.data());
  if (header_size > plain.size() - kLength) return std::nullopt;
  opened.header = zmq::message_t(plain.data() + kLength, header_size);
  opened.payload = zmq::message_t(plain.data() + kLength + header_size, plain.size() - kLength - header_size);
  if (!bound) return opened;  // a newcomer's hello, which it repeats anyway
  // Only now, with the box's origin proven, does its count move the session on.
  Session session{};
  std::memcpy(session.data(), nonce, kSessionBytes);
  const std::uint64_t count = protocols::load_le<std::uint64_t>(nonce + kSessionBytes);
  auto& sessions = taken_[from];
  const auto seen = std::find_if(sessions.begin(), sessions.end(), [&](const auto& s) { return s.first == session; });
  if (seen != sessions.end() && count <= seen->second) return why = "relay_replayed", std::nullopt;
  if (seen != sessions.end()) seen->second = count;
  else {
    sessions.emplace_back(session, count);
    if (sessions.size() > kSessionsKept) sessions.pop_front();
  }
  return opened;
}

}  // namespace starling::gossip
