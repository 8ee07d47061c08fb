#include "learners/checkpoints/checkpoint.h"

#include "learners/checkpoints/crc32.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace starling {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'S', 'T', 'R', 'L', 'C', 'K', 'P', 'T'};
constexpr uint32_t kVersion = 1;
constexpr const char* kPrefix = "ckpt-";
constexpr const char* kSuffix = ".starling";
constexpr const char* kFingerprint = "fingerprint";

struct Header {
  char magic[8];
  uint32_t version, sections;
  uint64_t step, body_bytes;
  uint32_t crc, zero;
};
static_assert(sizeof(Header) == 40, "checkpoint header is 40 bytes");

// The step a checkpoint file name carries, if it is one.
std::optional<uint64_t> step_of(const std::string& name) {
  const std::size_t prefix = std::char_traits<char>::length(kPrefix), suffix = std::char_traits<char>::length(kSuffix);
  if (name.size() <= prefix + suffix || name.compare(0, prefix, kPrefix) != 0 ||
      name.compare(name.size() - suffix, suffix, kSuffix) != 0)
    return std::nullopt;
  const std::string digits = name.substr(prefix, name.size() - prefix - suffix);
  if (digits.size() > 19 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(digits);
}

std::vector<uint8_t> encode_fingerprint(const Fingerprint& fingerprint) {
  std::string text;
  for (const auto& [key, value] : fingerprint) text += key + "=" + value + "\n";
  return {text.begin(), text.end()};
}

Fingerprint decode_fingerprint(const std::vector<uint8_t>& data) {
  Fingerprint out;
  const std::string text(data.begin(), data.end());
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::size_t eq = text.find('=', start);
    if (end == std::string::npos || eq == std::string::npos || eq > end)
      throw CheckpointError("malformed fingerprint section");
    out.emplace_back(text.substr(start, eq - start), text.substr(eq + 1, end - eq - 1));
    start = end + 1;
  }
  return out;
}

std::string errno_text() { return std::strerror(errno); }

// write() all of it, through short writes and interruptions.
bool write_all(int fd, const uint8_t* data, std::size_t bytes) {
  while (bytes > 0) {
    const ssize_t n = ::write(fd, data, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n, bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

// A rename is durable only once the folder's entry is on disk.
void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw CheckpointError(dir + ": cannot open the folder to sync it: " + errno_text());
  const bool ok = ::fsync(fd) == 0;
  const std::string why = ok ? "" : errno_text();
  ::close(fd);
  if (!ok) throw CheckpointError(dir + ": fsync of the folder failed: " + why);
}

bool is_partial(const std::string& name) {
  return name.rfind(std::string(".") + kPrefix, 0) == 0 && name.find(".tmp.") != std::string::npos;
}

}  // namespace

std::string fingerprint_difference(const Fingerprint& saved, const Fingerprint& wanted) {
  std::string out;
  auto lookup = [](const Fingerprint& f, const std::string& key) -> std::optional<std::string> {
    for (const auto& [k, v] : f)
      if (k == key) return v;
    return std::nullopt;
  };
  auto note = [&](const std::string& key, const std::optional<std::string>& in_file, const std::optional<std::string>& here) {
    if (in_file == here) return;
    out += (out.empty() ? "" : "; ") + key + ": " + (in_file ? *in_file : "(none)") + " in the checkpoint, " +
           (here ? *here : "(none)") + " here";
  };
  for (const auto& [key, value] : wanted) note(key, lookup(saved, key), value);
  for (const auto& [key, value] : saved)
    if (!lookup(wanted, key)) note(key, value, std::nullopt);
  return out;
}

SectionWriter& SectionWriter::bytes(const void* data, std::size_t count) {
  const auto* p = static_cast<const uint8_t*>(data);
  data_.insert(data_.end(), p, p + count);
  return *this;
}

const uint8_t* SectionReader::bytes(std::size_t count) {
  if (count > data_.size() - offset_)
    throw CheckpointError("section '" + name_ + "' ends early (" + std::to_string(data_.size()) + " bytes)");
  const uint8_t* p = data_.data() + offset_;
  offset_ += count;
  return p;
}

void SectionReader::floats(float* out, std::size_t count) {
  const auto stored = get<uint64_t>();
  if (stored != count)
    throw CheckpointError("section '" + name_ + "': an array of " + std::to_string(stored) + " values where " +
                          std::to_string(count) + " were expected");
  if (count) std::memcpy(out, bytes(count * sizeof(float)), count * sizeof(float));
}

std::string SectionReader::text() {
  const auto length = get<uint64_t>();
  const auto* p = bytes(length);
  return std::string(reinterpret_cast<const char*>(p), length);
}

void SectionReader::finish() const {
  if (!at_end())
    throw CheckpointError("section '" + name_ + "' has " + std::to_string(data_.size() - offset_) + " bytes too many");
}

SectionReader Checkpoint::reader(const std::string& name) const {
  for (const auto& [n, data] : sections)
    if (n == name) return SectionReader(data, name);
  throw CheckpointError("no section '" + name + "'");
}

bool Checkpoint::has(const std::string& name) const {
  return std::any_of(sections.begin(), sections.end(), [&](const auto& s) { return s.first == name; });
}

std::string checkpoint_file_name(uint64_t step) {
  char name[48];
  std::snprintf(name, sizeof name, "%s%09llu%s", kPrefix, static_cast<unsigned long long>(step), kSuffix);
  return name;
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<uint64_t, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const auto step = step_of(entry.path().filename().string());
    if (step && entry.is_regular_file(ec)) found.emplace_back(*step, entry.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::vector<uint8_t> encode_checkpoint(const Checkpoint& c) {
  SectionWriter body;
  auto section = [&](const std::string& name, const std::vector<uint8_t>& data) {
    body.put<uint32_t>(static_cast<uint32_t>(name.size())).bytes(name.data(), name.size());
    body.put<uint64_t>(data.size()).bytes(data.data(), data.size());
  };
  section(kFingerprint, encode_fingerprint(c.fingerprint));
  for (const auto& [name, data] : c.sections) section(name, data);
  std::vector<uint8_t> bytes = body.take();
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.sections = static_cast<uint32_t>(c.sections.size() + 1);
  h.step = c.step;
  h.body_bytes = bytes.size();
  h.crc = crc32_of(bytes.data(), bytes.size());
  const auto* hp = reinterpret_cast<const uint8_t*>(&h);
  bytes.insert(bytes.begin(), hp, hp + sizeof h);
  return bytes;
}

Checkpoint decode_checkpoint(const std::vector<uint8_t>& file) {
  if (file.size() < sizeof(Header)) throw CheckpointError("truncated: " + std::to_string(file.size()) + " bytes, no complete header");
  Header h;
  std::memcpy(&h, file.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw CheckpointError("not a Starling checkpoint");
  if (h.version != kVersion) throw CheckpointError("format version " + std::to_string(h.version) + " is not 1");
  if (file.size() - sizeof h != h.body_bytes)
    throw CheckpointError("size " + std::to_string(file.size()) + " does not match its header's " +
                          std::to_string(h.body_bytes + sizeof h) + " (truncated?)");
  if (crc32_of(file.data() + sizeof h, h.body_bytes) != h.crc) throw CheckpointError("CRC mismatch (corrupted)");
  const std::vector<uint8_t> body(file.begin() + sizeof h, file.end());
  SectionReader in(body, "body");
  Checkpoint c;
  c.step = h.step;
  for (uint32_t s = 0; s < h.sections; ++s) {
    const auto name_bytes = in.get<uint32_t>();
    const auto* name_start = reinterpret_cast<const char*>(in.bytes(name_bytes));
    const std::string name(name_start, name_bytes);
    const auto data_bytes = in.get<uint64_t>();
    const uint8_t* data_start = in.bytes(data_bytes);
    std::vector<uint8_t> data(data_start, data_start + data_bytes);
    if (s == 0) {
      if (name != kFingerprint) throw CheckpointError("the first section is '" + name + "', not the fingerprint");
      c.fingerprint = decode_fingerprint(data);
    } else {
      c.add(name, std::move(data));
    }
  }
  in.finish();
  if (h.sections == 0) throw CheckpointError("no fingerprint");
  return c;
}

Checkpoint read_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(path + ": cannot open: " + errno_text());
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw CheckpointError(path + ": read failed");
  try {
    Checkpoint c = decode_checkpoint(bytes);
    const auto named = step_of(fs::path(path).filename().string());
    if (named && *named != c.step)
      throw CheckpointError("holds step " + std::to_string(c.step) + ", its name says " + std::to_string(*named));
    return c;
  } catch (const CheckpointError& e) {
    throw CheckpointError(path + ": " + e.what());
  }
}

std::string write_checkpoint(const std::string& dir, const Checkpoint& checkpoint, int keep) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CheckpointError(dir + ": cannot create the checkpoint folder: " + ec.message());
  const std::vector<uint8_t> bytes = encode_checkpoint(checkpoint);
  const std::string name = checkpoint_file_name(checkpoint.step);
  const std::string path = (fs::path(dir) / name).string();
  // A hidden name of this process's own, in the same folder so that rename is atomic.
  const std::string tmp = (fs::path(dir) / ("." + name + ".tmp." + std::to_string(::getpid()))).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw CheckpointError(tmp + ": cannot create: " + errno_text());
  bool ok = write_all(fd, bytes.data(), bytes.size()) && ::fsync(fd) == 0;
  std::string why = ok ? "" : errno_text();
  if (::close(fd) != 0 && ok) ok = false, why = errno_text();
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) ok = false, why = "rename: " + errno_text();
  if (!ok) {
    ::unlink(tmp.c_str());
    throw CheckpointError(path + ": write failed: " + why);
  }
  sync_directory(dir);
  const std::vector<std::string> all = list_checkpoints(dir);
  for (std::size_t i = static_cast<std::size_t>(std::max(1, keep)); i < all.size(); ++i) fs::remove(all[i], ec);
  return path;
}

void remove_partial_checkpoints(const std::string& dir) {
  std::error_code ec;
  std::vector<fs::path> partial;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (is_partial(entry.path().filename().string())) partial.push_back(entry.path());
  for (const auto& p : partial) fs::remove(p, ec);
}

std::optional<FoundCheckpoint> find_newest_checkpoint(const std::string& dir, const Fingerprint& wanted,
                                                      const std::function<void(const std::string&)>& warn) {
  for (const std::string& path : list_checkpoints(dir)) {
    Checkpoint c;
    try {
      c = read_checkpoint(path);
    } catch (const CheckpointError& e) {
      warn(std::string("skipping checkpoint ") + e.what());
      continue;
    }
    const std::string difference = fingerprint_difference(c.fingerprint, wanted);
    if (!difference.empty())
      throw CheckpointMismatch(path + ": checkpoint of another run, refused (" + difference + ")");
    return FoundCheckpoint{path, std::move(c)};
  }
  return std::nullopt;
}

}  // namespace starling
