#pragma once
// Plain text as byte tokens (vocabulary 256): a file, or a folder's files, read once and
// packed into Starling's text cache, then memory-mapped read-only. Each file's last
// `validation_fraction` of bytes (rounded down) is its validation part, the rest its
// training part, so every file, and so every topic of a by-file split, is in both.
//
// What a folder contributes: its regular files, in sorted name order, not recursing. It
// skips symbolic links (fortunes' `.u8` names are links to the same text), hidden files
// (names starting with '.'), strfile's index files (`.dat`), and anything not a regular
// file; load_text_corpus reports them through `warn` in one line, counted by reason.
//
// Packed file (little-endian): "STRLTX01" | u32 version=1 | u32 files | u64 text_bytes |
// u64 table_bytes | u32 crc32(table, text) | u32 zero; then the table, per file: u64 bytes |
// u64 train_bytes | u32 name length | the name (its path); then the files' bytes back to back.
//
// A tokenized corpus (TextCorpus::tokenized, learners/data/tokenizer.h) holds subword token ids in
// place of bytes: each file's training and validation parts encoded apart, so both keep the
// byte split's text; its positions (TextFile's begin, bytes and train_bytes, size(), the
// starts of windows) then count tokens, and bytes_covered tells how many bytes they stand for.
#include "learners/data/dataset.h"
#include "learners/data/dataset_formats.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace starling {

class Tokenizer;

/// The vocabulary of byte tokens.
inline constexpr int kByteVocabulary = 256;

struct TextFile {
  std::string path;
  uint64_t begin = 0;        // its first byte in TextCorpus::bytes()
  uint64_t bytes = 0;        // its length
  uint64_t train_bytes = 0;  // [begin, begin + train_bytes) trains, the rest validates
  uint64_t train_end() const { return begin + train_bytes; }
  uint64_t end() const { return begin + bytes; }
};

class TextCorpus {
 public:
  /// The files' contents split as the header says; throws DataError when the fraction is
  /// outside [0, 1) or a file cannot be read.
  static TextCorpus from_files(const std::vector<std::string>& paths, double validation_fraction);
  /// Maps and validates a packed file (size, magic, version, table, checksum).
  static TextCorpus open_packed(const std::string& path);
  /// Writes the packed format atomically (temporary file, then rename).
  void write_packed(const std::string& path) const;
  /// `text` (a corpus of bytes) as `tokenizer`'s ids, each file's two parts encoded apart;
  /// throws DataError when `text` is tokenized already.
  static TextCorpus tokenized(const TextCorpus& text, const Tokenizer& tokenizer);

  const std::vector<TextFile>& files() const { return files_; }
  const uint8_t* bytes() const { return bytes_; }  // null when tokenized
  uint64_t size() const { return size_; }           // positions: bytes, or tokens
  bool is_tokenized() const { return tokens_ != nullptr; }
  /// Token ids run over [0, vocabulary()): 256 bytes, or the tokenizer's.
  int vocabulary() const;
  /// Bytes of text that positions [begin, end) stand for (end − begin unless tokenized).
  uint64_t bytes_covered(uint64_t begin, uint64_t end) const;

  /// Tokens t[n × window]: the bytes (or token ids) of the windows that start at `starts`.
  void gather(const uint64_t* starts, int n, int window, int32_t* tokens) const;

 private:
  struct Storage;
  std::shared_ptr<Storage> storage_;
  std::vector<TextFile> files_;
  const uint8_t* bytes_ = nullptr;
  const int32_t* tokens_ = nullptr;
  std::shared_ptr<const std::vector<uint32_t>> token_bytes_;  // per id, when tokenized
  uint64_t size_ = 0;
};

/// What a path holds, as the header says: the files to read and the entries skipped, each
/// with why. Throws DataError when the path is missing or a folder has no file to read.
struct SkippedEntry {
  std::string path, why;
};
struct TextListing {
  std::vector<std::string> files;
  std::vector<SkippedEntry> skipped;
};
TextListing list_text_files(const std::string& path);

/// The text at `path` (a file or a folder), packed into `cache_dir` under a name derived
/// from its files' paths, sizes and times and the fraction, so that changed files are read
/// again; a cached file that fails validation is reported through `warn` and rebuilt.
/// Throws DataError naming the path.
TextCorpus load_text_corpus(const std::string& cache_dir, const std::string& path, double validation_fraction,
                            const Warn& warn);

/// Every file's training part holds at least one window of `window` bytes, and the
/// validation parts at least one between them; throws DataError naming the short file.
void check_windows(const TextCorpus& corpus, int window);

/// Where the validation windows of `window` bytes start: in each file's validation part,
/// every window − 1 bytes (the last target of one window is the first input of the next,
/// so every validation byte after a part's first is predicted once); a part's tail shorter
/// than a window is left out.
std::vector<uint64_t> validation_windows(const TextCorpus& corpus, int window);

}  // namespace starling
