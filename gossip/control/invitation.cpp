// Owner-signed invitations to a swarm (gossip/control/invitation.h).
#include "gossip/control/invitation.h"

#include <sodium.h>

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace starling::gossip {

namespace {

constexpr const char* kMagic = "starling-invitation 1";

void init_sodium() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
}

std::string hex(const unsigned char* bytes, std::size_t n) {
  std::string out(2 * n + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes, n);
  out.pop_back();
  return out;
}

// The bytes of `text` when it is exactly 2 * size lowercase or uppercase hex digits.
bool unhex(const std::string& text, std::vector<unsigned char>& out, std::size_t size) {
  if (text.size() != 2 * size) return false;
  out.assign(size, 0);
  std::size_t written = 0;
  const char* end = nullptr;
  return sodium_hex2bin(out.data(), size, text.data(), text.size(), nullptr, &written, &end) == 0 && written == size &&
         end == text.data() + text.size();
}

// Reads the next line, `key value`, into value and the signed text; false when it is not one.
bool field(std::istringstream& in, const std::string& key, std::string& value, std::string& signed_text) {
  std::string line;
  if (!std::getline(in, line)) return false;
  if (line.compare(0, key.size() + 1, key + " ") != 0) return false;
  value = line.substr(key.size() + 1);
  if (key != "signature") signed_text += line + "\n";
  return true;
}

}  // namespace

OwnerKeys new_owner_keys() {
  init_sodium();
  unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_keypair(pk, sk);
  OwnerKeys keys{hex(pk, sizeof pk), hex(sk, sizeof sk)};
  sodium_memzero(sk, sizeof sk);
  return keys;
}

std::string job_id_of(const std::string& description) {
  init_sodium();
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(description.data()), description.size());
  return hex(digest, sizeof digest);
}

bool is_owner_public_key(const std::string& text) {
  std::vector<unsigned char> bytes;
  return unhex(text, bytes, crypto_sign_PUBLICKEYBYTES);
}

std::string issue_invitation(const std::string& secret_key, const std::string& job_id, std::int64_t expires) {
  init_sodium();
  std::vector<unsigned char> sk, job;
  if (!unhex(secret_key, sk, crypto_sign_SECRETKEYBYTES)) throw std::invalid_argument("malformed owner secret key");
  if (!unhex(job_id, job, crypto_hash_sha256_BYTES)) throw std::invalid_argument("malformed job id");
  unsigned char nonce[16];
  randombytes_buf(nonce, sizeof nonce);
  const std::string text = std::string(kMagic) + "\njob " + job_id + "\nexpires " + std::to_string(expires) +
                           "\nnonce " + hex(nonce, sizeof nonce) + "\n";
  unsigned char signature[crypto_sign_BYTES];
  crypto_sign_detached(signature, nullptr, reinterpret_cast<const unsigned char*>(text.data()), text.size(), sk.data());
  sodium_memzero(sk.data(), sk.size());
  return text + "signature " + hex(signature, sizeof signature) + "\n";
}

std::string check_invitation(const std::string& invitation, const std::string& public_key, const std::string& job_id,
                             std::int64_t now) {
  init_sodium();
  if (invitation.empty()) return "the joiner holds no invitation";
  std::istringstream in(invitation);
  std::string magic, job, expires, nonce, signature_hex, signed_text;
  if (!std::getline(in, magic) || magic != kMagic) return "the invitation is malformed (not a starling-invitation 1)";
  signed_text = magic + "\n";
  if (!field(in, "job", job, signed_text) || !field(in, "expires", expires, signed_text) ||
      !field(in, "nonce", nonce, signed_text) || !field(in, "signature", signature_hex, signed_text))
    return "the invitation is malformed (expected the lines job, expires, nonce, signature)";
  std::string rest;
  if (std::getline(in, rest) && !rest.empty()) return "the invitation is malformed (text after its signature)";
  std::vector<unsigned char> pk, signature;
  if (!unhex(public_key, pk, crypto_sign_PUBLICKEYBYTES)) return "this peer's swarm.owner_key is malformed";
  if (!unhex(signature_hex, signature, crypto_sign_BYTES)) return "the invitation is malformed (its signature)";
  if (crypto_sign_verify_detached(signature.data(), reinterpret_cast<const unsigned char*>(signed_text.data()),
                                  signed_text.size(), pk.data()) != 0)
    return "the invitation's signature is not the job owner's (forged, altered, or of another owner)";
  if (job != job_id) return "the invitation is for another job (" + job.substr(0, 12) + "..., this job is " +
                            job_id.substr(0, 12) + "...)";
  std::int64_t until = 0;
  try {
    std::size_t used = 0;
    until = std::stoll(expires, &used);
    if (used != expires.size() || until < 0) return "the invitation is malformed (its expiry)";
  } catch (const std::exception&) {
    return "the invitation is malformed (its expiry)";
  }
  if (until != 0 && now >= until)
    return "the invitation expired " + std::to_string(now - until) + " s ago";
  return {};
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace starling::gossip
