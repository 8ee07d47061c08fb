// The owner's key pair and invitations to a swarm (cli/invite_command.h).
#include "cli/invite_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "cli/config.h"
#include "job/exit_codes.h"
#include "job/owner_keys.h"

namespace starling::cli {

namespace {

constexpr const char* kKeyMagic = "starling-owner-key 1";

// Writes `text` to a new file readable by its owner alone; std::runtime_error on failure.
void write_private(const std::string& path, const std::string& text, bool force) {
  if (force) ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    throw std::runtime_error(path + ": " + std::strerror(errno) + (errno == EEXIST ? " (use --force to replace it)" : ""));
  const ssize_t n = ::write(fd, text.data(), text.size());
  const bool ok = n == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error(path + ": the write failed");
}

job::OwnerKeys read_owner_key(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("--key: cannot read " + path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077))
    spdlog::warn("{}: others may read the owner's secret key (chmod 600 it)", path);
  std::string magic, pub, sec;
  std::getline(in, magic);
  std::getline(in, pub);
  std::getline(in, sec);
  job::OwnerKeys keys;
  if (magic != kKeyMagic || pub.rfind("public ", 0) != 0 || sec.rfind("secret ", 0) != 0)
    throw ConfigError(path + ": not an owner key file (starling invite --new-owner-key writes one)");
  keys.public_key = pub.substr(7);
  keys.secret_key = sec.substr(7);
  if (!job::is_owner_public_key(keys.public_key)) throw ConfigError(path + ": its public key is malformed");
  return keys;
}

int new_owner_key(const InviteOptions& o) {
  const job::OwnerKeys keys = job::new_owner_keys();
  write_private(o.out, std::string(kKeyMagic) + "\npublic " + keys.public_key + "\nsecret " + keys.secret_key + "\n", o.force);
  spdlog::info("wrote the owner's key pair to {} (keep it secret: it issues invitations)", o.out);
  std::printf("[swarm]\nowner_key = \"%s\"\n", keys.public_key.c_str());
  return 0;
}

int invite(const InviteOptions& o) {
  const job::OwnerKeys keys = read_owner_key(o.key);
  const Config config = load_config(o.job, o.overrides);
  if (config.node.exchange.owner_key != keys.public_key)
    throw ConfigError(o.job + ": swarm.owner_key " +
                      (config.node.exchange.owner_key.empty() ? std::string("is not set") : "is another owner's") +
                      "; this key's public half is " + keys.public_key);
  const std::string id = job::job_id_of(job_description(o.job, o.overrides));
  const std::int64_t expires =
      o.expires_hours > 0 ? job::unix_now() + static_cast<std::int64_t>(o.expires_hours * 3600.0) : 0;
  write_private(o.out, job::issue_invitation(keys.secret_key, id, expires), o.force);
  spdlog::info("wrote an invitation to job {} to {} ({})", id.substr(0, 16), o.out,
               expires ? fmt::format("expires in {:g} h", o.expires_hours) : std::string("does not expire"));
  return 0;
}

}  // namespace

// Bad arguments, keys and configs are ConfigErrors: exit 2.
int run_invite(const InviteOptions& o) {
  return job::exit_code_of([&] {
    if (o.new_owner_key) {
      if (!o.key.empty() || !o.job.empty()) throw ConfigError("--new-owner-key takes no --key or --job");
      return new_owner_key(o);
    }
    if (o.key.empty() || o.job.empty()) throw ConfigError("give --key and --job (or --new-owner-key)");
    if (o.expires_hours < 0) throw ConfigError("--expires: expected hours >= 0");
    return invite(o);
  });
}

}  // namespace starling::cli
