// CURVE key pairs and key files (gossip/transport/curve_keys.h).
#include "gossip/transport/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

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

// Z85 (ZeroMQ's RFC 32): each 5 characters of this alphabet are a base-85 number, most
// significant first, that must fit 32 bits (4 bytes of the key).
bool is_z85_key(const std::string& key) {
  static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  if (key.size() != kZ85KeyLength) return false;
  for (std::size_t group = 0; group < key.size(); group += 5) {
    std::uint64_t value = 0;
    for (std::size_t i = group; i < group + 5; ++i) {
      const char* digit = key[i] ? std::strchr(kAlphabet, key[i]) : nullptr;
      if (!digit) return false;
      value = value * 85 + static_cast<std::uint64_t>(digit - kAlphabet);
    }
    if (value > UINT32_MAX) return false;
  }
  return true;
}

std::string key_file_path(const std::string& dir, const std::string& name, const char* extension) {
  // A name becomes part of a path: keep it to one plain component.
  const bool plain = !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
  if (!plain) STARLING_KEY_THROW(join_path(dir, name), "key name must be one plain file name component");
  return join_path(dir, name + extension);
}

void write_keypair(const std::string& dir, const std::string& name, const CurveKeyPair& keys, bool overwrite) {
  const std::string secret_path = key_file_path(dir, name, ".key");
  const std::string public_path = key_file_path(dir, name, ".pub");
  if (!is_z85_key(keys.secret_key)) STARLING_KEY_THROW(secret_path, "refusing to write an invalid secret key");
  if (!is_z85_key(keys.public_key)) STARLING_KEY_THROW(public_path, "refusing to write an invalid public key");
  write_file(secret_path, keys.secret_key + "\n", 0600, overwrite);
  write_file(public_path, keys.public_key + "\n", 0644, overwrite);
}

std::string read_public_key(const std::string& path) { return read_key(path, false); }

std::string read_secret_key(const std::string& path) { return read_key(path, true); }

}  // namespace starling::gossip
