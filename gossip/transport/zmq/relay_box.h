#pragma once
// End-to-end encryption of what a relay passes on between two peers with CURVE (private to
// gossip/transport/zmq/). CURVE ends at the relay, so a frame relayed for a peer behind NAT
// travels as a box only its destination can open and only its origin can have made:
// libsodium's crypto_box (X25519, XSalsa20-Poly1305) between the two ends' CURVE keys,
// which are X25519 keys. The relay sees ciphertext and the envelope's destination only.
//
// Wire format, in the place of a relayed frame's header (its payload frame is then empty):
//   origin public key (32) | nonce (24) | box of: header length u32 LE | header | payload
// The nonce is the origin's session (16 random bytes, drawn when its transport starts) and a
// count of the boxes it has made (u64 LE). A receiver opens a box only under the key the
// origin's id is bound to (a newcomer's hello: under the key it names, which the newcomer
// then holds), and takes a bound origin's boxes only in increasing count per session, so a
// relay can neither forge, alter nor replay a frame. What it keeps per key and per origin
// (precomputed keys, sessions) it keeps for bound origins only: strangers, who pick their
// keys and ids at will, cannot make it grow.
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <zmq.hpp>

#include "gossip/transport/curve_keys.h"
#include "gossip/transport/message.h"

namespace starling::gossip {

class RelayBox {
 public:
  explicit RelayBox(const CurveKeyPair& own);

  /// The box of `header` and `payload` for the peer whose key (Z85) is `to_key`; nullopt
  /// when `to_key` is not a CURVE key.
  std::optional<zmq::message_t> seal(const std::string& to_key, const zmq::message_t& header,
                                     const zmq::message_t& payload);

  struct Opened {
    std::string key;  // the origin's (Z85)
    zmq::message_t header, payload;
  };
  /// The frame in a box relayed from `from`, whose frames must come under `bound` (Z85; null:
  /// any key, the box's own). Nullopt with `why` set (a drop reason) when it does not open.
  std::optional<Opened> open(PeerId from, const std::string* bound, const zmq::message_t& box, std::string& why);

 private:
  using Key = std::array<unsigned char, 32>;
  using Session = std::array<unsigned char, 16>;
  Key shared_key(const Key& peer) const;
  const Key& shared_with(const Key& peer);  // cached

  Key public_{}, secret_{};
  Session session_{};
  std::uint64_t made_ = 0;
  std::map<Key, Key> shared_;  // precomputed crypto_box keys by the other end's public key
  // Per origin, the last count taken from each of its recent sessions (newest last).
  std::map<PeerId, std::deque<std::pair<Session, std::uint64_t>>> taken_;
};

}  // namespace starling::gossip
