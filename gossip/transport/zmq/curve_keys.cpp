// CURVE key pairs and key files (gossip/transport/curve_keys.h).
#include "gossip/transport/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <zmq.h>

namespace starling::gossip {

namespace {

// Anything larger than one key line is not a key file; reading stops there.
constexpr std::size_t kMaxKeyFileBytes = 256;

#define STARLING_KEY_THROW(path, reason) throw KeyFileError(__FILE__, __LINE__, (path), (reason))

std::string errno_text() { return std::strerror(errno); }

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

// A name becomes part of a path: keep it to one plain component.
void check_name(const std::string& dir, const std::string& name) {
  const bool plain = !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
  if (!plain) STARLING_KEY_THROW(join_path(dir, name), "key name must be one plain file name component");
}

// Creates path with exactly `mode` (umask does not widen or narrow it) and writes text.
void write_file(const std::string& path, const std::string& text, mode_t mode, bool overwrite) {
  const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  const int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0)
    STARLING_KEY_THROW(path, errno == EEXIST ? "already exists (refusing to overwrite a key)"
                                             : "cannot create: " + errno_text());
  bool ok = ::fchmod(fd, mode) == 0;
  std::size_t done = 0;
  while (ok && done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  const std::string why = ok ? "" : errno_text();
  if (::close(fd) != 0 && ok) STARLING_KEY_THROW(path, "cannot write: " + errno_text());
  if (!ok) STARLING_KEY_THROW(path, "cannot write: " + why);
}

// The file's first line without surrounding blanks; checks the secret file's mode first.
std::string read_key_line(const std::string& path, bool secret) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) STARLING_KEY_THROW(path, errno == ENOENT ? "no such file" : "cannot open: " + errno_text());
  struct stat st {};
  std::string text(kMaxKeyFileBytes + 1, '\0');
  ssize_t n = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !(secret && (st.st_mode & 077)))
    n = ::read(fd, text.data(), text.size());
  const int read_errno = errno;
  ::close(fd);
  if (!S_ISREG(st.st_mode)) STARLING_KEY_THROW(path, "not a regular file");
  if (secret && (st.st_mode & 077)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    STARLING_KEY_THROW(path, std::string("secret key readable by others (mode ") + mode + "); expected 0600");
  }
  if (n < 0) STARLING_KEY_THROW(path, "cannot read: " + std::string(std::strerror(read_errno)));
  if (static_cast<std::size_t>(n) > kMaxKeyFileBytes) STARLING_KEY_THROW(path, "too large to be a key file");
  text.resize(static_cast<std::size_t>(n));
  const std::size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) STARLING_KEY_THROW(path, "empty key file");
  const std::size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::string read_key(const std::string& path, bool secret) {
  std::string key = read_key_line(path, secret);
  if (!is_z85_key(key))
    STARLING_KEY_THROW(path, "not a CURVE key (expected " + std::to_string(kZ85KeyLength) +
                                 " Z85 characters, found " + std::to_string(key.size()) + " characters)");
  return key;
}

}  // namespace

KeyFileError::KeyFileError(const char* file, int line, std::string path, std::string reason)
    : GossipError(file, line, path + ": " + reason), path_(std::move(path)), reason_(std::move(reason)) {}

bool is_z85_key(const std::string& key) {
  if (key.size() != kZ85KeyLength) return false;
  std::uint8_t raw[32];
  return zmq_z85_decode(raw, key.c_str()) != nullptr;
}

CurveKeyPair generate_keypair() {
  char pub[kZ85KeyLength + 1];
  char sec[kZ85KeyLength + 1];
  if (zmq_curve_keypair(pub, sec) != 0)
    STARLING_GOSSIP_THROW(IoError, std::string("cannot generate a CURVE key pair: ") + zmq_strerror(zmq_errno()));
  return {pub, sec};
}

void write_keypair(const std::string& dir, const std::string& name, const CurveKeyPair& keys, bool overwrite) {
  check_name(dir, name);
  const std::string secret_path = join_path(dir, name + ".key");
  const std::string public_path = join_path(dir, name + ".pub");
  if (!is_z85_key(keys.secret_key)) STARLING_KEY_THROW(secret_path, "refusing to write an invalid secret key");
  if (!is_z85_key(keys.public_key)) STARLING_KEY_THROW(public_path, "refusing to write an invalid public key");
  write_file(secret_path, keys.secret_key + "\n", 0600, overwrite);
  write_file(public_path, keys.public_key + "\n", 0644, overwrite);
}

CurveKeyPair write_keypair(const std::string& dir, const std::string& name, bool overwrite) {
  CurveKeyPair keys = generate_keypair();
  write_keypair(dir, name, keys, overwrite);
  return keys;
}

std::string read_public_key(const std::string& path) { return read_key(path, false); }

std::string read_secret_key(const std::string& path) { return read_key(path, true); }

CurveKeyPair read_keypair(const std::string& dir, const std::string& name) {
  check_name(dir, name);
  CurveKeyPair keys;
  keys.secret_key = read_secret_key(join_path(dir, name + ".key"));
  keys.public_key = read_public_key(join_path(dir, name + ".pub"));
  char derived[kZ85KeyLength + 1];
  if (zmq_curve_public(derived, keys.secret_key.c_str()) != 0 || keys.public_key != derived)
    STARLING_KEY_THROW(join_path(dir, name + ".pub"), "public key does not belong to " + name + ".key");
  return keys;
}

}  // namespace starling::gossip
