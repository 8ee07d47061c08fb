// Text as byte tokens, packed and memory-mapped (learners/data/text_corpus.h).
#include "learners/data/text_corpus.h"

#include "learners/checkpoints/crc32.h"
#include "learners/data/mapped_file.h"
#include "learners/data/tokenizer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

namespace starling {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'S', 'T', 'R', 'L', 'T', 'X', '0', '1'};
constexpr uint32_t kVersion = 1;

struct PackedHeader {
  char magic[8];
  uint32_t version, files;
  uint64_t text_bytes, table_bytes;
  uint32_t crc, reserved;
};
static_assert(sizeof(PackedHeader) == 40, "packed text header is 40 bytes");

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

std::string encode_table(const std::vector<TextFile>& files) {
  std::string table;
  for (const TextFile& f : files) {
    put<uint64_t>(table, f.bytes);
    put<uint64_t>(table, f.train_bytes);
    put<uint32_t>(table, static_cast<uint32_t>(f.path.size()));
    table += f.path;
  }
  return table;
}

// Reads the table at [at, end), checking every length against what is left.
class TableReader {
 public:
  TableReader(const uint8_t* at, const uint8_t* end, const std::string& path) : at_(at), end_(end), path_(path) {}
  template <typename T>
  T get() {
    T value;
    need(sizeof value);
    std::memcpy(&value, at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::string text(std::size_t n) {
    need(n);
    std::string s(reinterpret_cast<const char*>(at_), n);
    at_ += n;
    return s;
  }
  bool done() const { return at_ == end_; }

 private:
  void need(std::size_t n) const {
    if (static_cast<std::size_t>(end_ - at_) < n) throw DataError(path_ + ": file table truncated (corrupted)");
  }
  const uint8_t* at_;
  const uint8_t* end_;
  const std::string& path_;
};

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": missing or unreadable");
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw DataError(path + ": read failed");
  return bytes;
}

// Why a folder entry is not read, or empty when it is.
std::string skip_reason(const fs::directory_entry& entry) {
  const std::string name = entry.path().filename().string();
  std::error_code ec;
  if (entry.is_symlink(ec)) return "a symbolic link";
  if (!name.empty() && name[0] == '.') return "hidden";
  if (entry.path().extension() == ".dat") return "a strfile index (.dat)";
  if (entry.is_directory(ec)) return "a folder (folders are not read)";
  if (!entry.is_regular_file(ec)) return "not a regular file";
  return "";
}

// "text: PATH: N files read; skipped M: 43 symbolic links, ...": the skips counted by reason.
std::string skip_summary(const std::string& path, const TextListing& listing) {
  std::map<std::string, int> by_reason;
  for (const SkippedEntry& s : listing.skipped) ++by_reason[s.why];
  std::string out = "text: " + path + ": " + std::to_string(listing.files.size()) + " files read; skipped " +
                    std::to_string(listing.skipped.size()) + ":";
  for (const auto& [why, count] : by_reason) out += " " + std::to_string(count) + " × " + why + ",";
  out.pop_back();
  return out;
}

}  // namespace

struct TextCorpus::Storage : ByteStorage {
  std::vector<int32_t> tokens;  // a tokenized corpus's ids
};

TextCorpus TextCorpus::from_files(const std::vector<std::string>& paths, double validation_fraction) {
  if (!(validation_fraction >= 0.0 && validation_fraction < 1.0))
    throw DataError("text: the validation fraction must be in [0, 1)");
  TextCorpus c;
  c.storage_ = std::make_shared<Storage>();
  std::vector<uint8_t>& all = c.storage_->owned;
  for (const std::string& path : paths) {
    const std::vector<uint8_t> bytes = read_all(path);
    TextFile f;
    f.path = path, f.begin = all.size(), f.bytes = bytes.size();
    f.train_bytes = f.bytes - static_cast<uint64_t>(std::floor(static_cast<double>(f.bytes) * validation_fraction));
    all.insert(all.end(), bytes.begin(), bytes.end());
    c.files_.push_back(std::move(f));
  }
  c.bytes_ = all.data();
  c.size_ = all.size();
  return c;
}

TextCorpus TextCorpus::open_packed(const std::string& path) {
  TextCorpus c;
  c.storage_ = std::make_shared<Storage>();
  map_file(path, sizeof(PackedHeader), *c.storage_);
  const void* map = c.storage_->map;
  const std::size_t size = c.storage_->map_bytes;

  PackedHeader h;
  std::memcpy(&h, map, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw DataError(path + ": not a Starling packed text");
  if (h.version != kVersion) throw DataError(path + ": packed text version " + std::to_string(h.version) + " is not 1");
  const uint64_t body = size - sizeof h;
  if (h.table_bytes > body || body - h.table_bytes != h.text_bytes)
    throw DataError(path + ": size " + std::to_string(size) + " does not match its header (truncated?)");
  const auto* table = static_cast<const uint8_t*>(map) + sizeof h;
  if (crc32_of(table, body) != h.crc) throw DataError(path + ": checksum mismatch (corrupted)");

  TableReader in(table, table + h.table_bytes, path);
  uint64_t begin = 0;
  for (uint32_t i = 0; i < h.files; ++i) {
    TextFile f;
    f.begin = begin;
    f.bytes = in.get<uint64_t>();
    f.train_bytes = in.get<uint64_t>();
    f.path = in.text(in.get<uint32_t>());
    if (f.train_bytes > f.bytes || f.bytes > h.text_bytes - begin) throw DataError(path + ": inconsistent file table");
    begin += f.bytes;
    c.files_.push_back(std::move(f));
  }
  if (!in.done() || begin != h.text_bytes) throw DataError(path + ": inconsistent file table");
  c.bytes_ = table + h.table_bytes;
  c.size_ = h.text_bytes;
  return c;
}

void TextCorpus::write_packed(const std::string& path) const {
  const std::string table = encode_table(files_);
  PackedHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.files = static_cast<uint32_t>(files_.size());
  h.text_bytes = size_, h.table_bytes = table.size();
  h.crc = crc32_of(bytes_, size_, crc32_of(table.data(), table.size()));
  // A name of this process's own: peers started together may all fill the same cache.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw DataError(tmp + ": cannot write: " + std::strerror(errno));
  const bool ok = std::fwrite(&h, sizeof h, 1, f) == 1 && std::fwrite(table.data(), 1, table.size(), f) == table.size() &&
                  std::fwrite(bytes_, 1, size_, f) == size_ && std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw DataError(path + ": write failed: " + std::strerror(errno));
  }
}

TextCorpus TextCorpus::tokenized(const TextCorpus& text, const Tokenizer& tokenizer) {
  if (text.is_tokenized()) throw DataError("text: the corpus is tokenized already");
  TextCorpus c;
  c.storage_ = std::make_shared<Storage>();
  std::vector<int32_t>& all = c.storage_->tokens;
  const auto encode = [&](uint64_t begin, uint64_t end) {
    const std::vector<int32_t> ids = tokenizer.encode(
        std::string_view(reinterpret_cast<const char*>(text.bytes_ + begin), static_cast<std::size_t>(end - begin)));
    all.insert(all.end(), ids.begin(), ids.end());
    return static_cast<uint64_t>(ids.size());
  };
  for (const TextFile& f : text.files_) {
    TextFile t;
    t.path = f.path, t.begin = all.size();
    t.train_bytes = encode(f.begin, f.train_end());
    t.bytes = t.train_bytes + encode(f.train_end(), f.end());
    c.files_.push_back(std::move(t));
  }
  c.tokens_ = all.data();
  c.size_ = all.size();
  c.token_bytes_ = std::make_shared<const std::vector<uint32_t>>(tokenizer.token_bytes());
  return c;
}

int TextCorpus::vocabulary() const {
  return token_bytes_ ? static_cast<int>(token_bytes_->size()) : kByteVocabulary;
}

uint64_t TextCorpus::bytes_covered(uint64_t begin, uint64_t end) const {
  if (!tokens_) return end - begin;
  uint64_t bytes = 0;
  for (uint64_t i = begin; i < end; ++i) bytes += (*token_bytes_)[static_cast<std::size_t>(tokens_[i])];
  return bytes;
}

void TextCorpus::gather(const uint64_t* starts, int n, int window, int32_t* tokens) const {
  if (tokens_) {
    for (int i = 0; i < n; ++i)
      std::copy(tokens_ + starts[i], tokens_ + starts[i] + window, tokens + static_cast<std::size_t>(i) * window);
    return;
  }
  for (int i = 0; i < n; ++i) {
    const uint8_t* from = bytes_ + starts[i];
    int32_t* to = tokens + static_cast<std::size_t>(i) * window;
    for (int j = 0; j < window; ++j) to[j] = from[j];
  }
}

TextListing list_text_files(const std::string& path) {
  std::error_code ec;
  if (path.empty()) throw DataError("text: no path given (data.path)");
  if (!fs::exists(path, ec)) throw DataError(path + ": missing");
  TextListing listing;
  if (!fs::is_directory(path, ec)) {
    if (!fs::is_regular_file(path, ec)) throw DataError(path + ": not a file or a folder");
    listing.files.push_back(path);
    return listing;
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) {
    std::string why = skip_reason(entry);
    if (why.empty()) listing.files.push_back(entry.path().string());
    else listing.skipped.push_back({entry.path().string(), std::move(why)});
  }
  if (ec) throw DataError(path + ": cannot list: " + ec.message());
  std::sort(listing.files.begin(), listing.files.end());
  std::sort(listing.skipped.begin(), listing.skipped.end(),
            [](const SkippedEntry& a, const SkippedEntry& b) { return a.path < b.path; });
  if (listing.files.empty()) throw DataError(path + ": no text files in the folder");
  return listing;
}

TextCorpus load_text_corpus(const std::string& cache_dir, const std::string& path, double validation_fraction,
                            const Warn& warn) {
  const TextListing listing = list_text_files(path);
  if (!listing.skipped.empty()) warn(skip_summary(path, listing));
  make_cache_dir(cache_dir);
  std::vector<std::string> stamped = listing.files;
  stamped.push_back("validation " + std::to_string(validation_fraction));
  const std::string packed = cache_dir + "/text-" + source_stamp(stamped) + ".stx";
  std::error_code ec;
  if (fs::exists(packed, ec)) {
    try {
      return TextCorpus::open_packed(packed);
    } catch (const DataError& e) {
      warn(std::string(e.what()) + "; rebuilding the cache");
    }
  }
  TextCorpus::from_files(listing.files, validation_fraction).write_packed(packed);
  return TextCorpus::open_packed(packed);
}

void check_windows(const TextCorpus& corpus, int window) {
  const std::string unit = corpus.is_tokenized() ? " tokens" : " bytes";
  if (window < 2) throw DataError("text: a window needs at least two" + unit + " (an input and its target)");
  const auto w = static_cast<uint64_t>(window);
  for (const TextFile& f : corpus.files())
    if (f.train_bytes < w)
      throw DataError(f.path + ": its training part (" + std::to_string(f.train_bytes) + " of its " +
                      std::to_string(f.bytes) + unit + ") is shorter than one window of " + std::to_string(window) + unit +
                      " (model.context + 1)");
  if (validation_windows(corpus, window).empty())
    throw DataError("text: no file's validation part holds a window of " + std::to_string(window) + unit +
                    " (model.context + 1); raise data.validation_fraction or use longer files");
}

std::vector<uint64_t> validation_windows(const TextCorpus& corpus, int window) {
  std::vector<uint64_t> starts;
  if (window < 2) return starts;
  const auto w = static_cast<uint64_t>(window);
  for (const TextFile& f : corpus.files())
    for (uint64_t at = f.train_end(); at + w <= f.end(); at += w - 1) starts.push_back(at);
  return starts;
}

}  // namespace starling
