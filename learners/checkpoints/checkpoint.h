#pragma once
// Checkpoint files: what a training run needs to continue exactly, as named binary sections
// behind a header, with a CRC-32 over the body. This file is the format and the folder of
// checkpoints (naming, atomic writes, keeping the newest few, finding the newest valid one);
// what goes into the sections is their owners' business (Learner::save, the node actor).
//
// File (little-endian hosts; native byte order throughout):
//   header, 40 bytes: "STRLCKPT" | u32 version = 1 | u32 section count | u64 step
//                     | u64 body bytes | u32 crc32(body) | u32 zero
//   body: per section  u32 name bytes | name | u64 data bytes | data
// The first section is "fingerprint": `key=value` lines naming what must match for the state
// to fit the run (model, learner count, exchange rank, ...). Files are named
// ckpt-<step, 9+ digits>.starling, so names sort by step.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace starling {

/// A checkpoint that cannot be used: unreadable, truncated, corrupted (bad CRC), malformed,
/// or (on write) a file that could not be made durable.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A valid checkpoint of another run (other model, learners, rank, ...): refused, not skipped,
/// because continuing from an older one of the right run would silently lose its newer state.
class CheckpointMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Ordered `key=value` pairs; keys and values must not contain '\n', keys no '='.
using Fingerprint = std::vector<std::pair<std::string, std::string>>;

/// What differs between two fingerprints, e.g. "model: mlp[...] in the checkpoint, mlp[...]
/// here; learners: 2 in the checkpoint, 3 here"; empty when they match.
std::string fingerprint_difference(const Fingerprint& saved, const Fingerprint& wanted);

/// Appends the raw bytes of values and arrays to one section's data.
class SectionWriter {
 public:
  template <typename T>
  SectionWriter& put(const T& value) {
    static_assert(std::is_trivially_copyable<T>::value, "put() copies bytes");
    return bytes(&value, sizeof value);
  }
  SectionWriter& floats(const float* data, std::size_t count) { return put<uint64_t>(count).bytes(data, count * sizeof(float)); }
  SectionWriter& text(const std::string& s) { return put<uint64_t>(s.size()).bytes(s.data(), s.size()); }
  SectionWriter& bytes(const void* data, std::size_t count);
  std::vector<uint8_t> take() { return std::move(data_); }

 private:
  std::vector<uint8_t> data_;
};

/// Reads a section back in the order it was written; CheckpointError naming the section on
/// any read past its end or an array of another length than expected.
class SectionReader {
 public:
  SectionReader(const std::vector<uint8_t>& data, std::string name) : data_(data), name_(std::move(name)) {}
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable<T>::value, "get() copies bytes");
    T value;
    std::memcpy(&value, bytes(sizeof value), sizeof value);
    return value;
  }
  /// The next `count` raw bytes.
  const uint8_t* bytes(std::size_t count);
  /// Fills exactly `count` floats.
  void floats(float* out, std::size_t count);
  std::string text();
  bool at_end() const { return offset_ == data_.size(); }
  /// Throws unless every byte was read (a section of another layout).
  void finish() const;
  const std::string& name() const { return name_; }

 private:
  const std::vector<uint8_t>& data_;
  std::string name_;
  std::size_t offset_ = 0;
};

struct Checkpoint {
  uint64_t step = 0;
  Fingerprint fingerprint;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> sections;  // in file order

  void add(const std::string& name, std::vector<uint8_t> data) { sections.emplace_back(name, std::move(data)); }
  /// CheckpointError when the section is missing.
  SectionReader reader(const std::string& name) const;
  bool has(const std::string& name) const;
};

/// "ckpt-000001200.starling".
std::string checkpoint_file_name(uint64_t step);

/// The checkpoint files in `dir`, newest (highest step) first; none when `dir` is missing.
std::vector<std::string> list_checkpoints(const std::string& dir);

/// Serialises to the file format (tests corrupt the bytes).
std::vector<uint8_t> encode_checkpoint(const Checkpoint& checkpoint);
/// Parses and validates a whole file image; CheckpointError says what is wrong.
Checkpoint decode_checkpoint(const std::vector<uint8_t>& file);

/// Reads and validates one file; CheckpointError names the file and what is wrong.
Checkpoint read_checkpoint(const std::string& path);

/// Writes `checkpoint` into `dir` (created if needed) so that a crash at any instant leaves
/// either the complete file or none: a temporary file in the same folder, fsync, rename,
/// fsync of the folder. Then deletes all but the newest `keep` checkpoints. Returns the
/// path; CheckpointError (and no file) on failure.
std::string write_checkpoint(const std::string& dir, const Checkpoint& checkpoint, int keep = 3);

/// Removes temporary files that a writer killed mid-write left in `dir`.
void remove_partial_checkpoints(const std::string& dir);

struct FoundCheckpoint {
  std::string path;
  Checkpoint checkpoint;
};

/// The newest valid checkpoint in `dir`: unusable files (truncated, bad CRC, malformed) are
/// skipped with a warning naming them; the first valid one must carry `wanted`, else
/// CheckpointMismatch names the file and what differs. Empty when there is no valid one.
std::optional<FoundCheckpoint> find_newest_checkpoint(const std::string& dir, const Fingerprint& wanted,
                                                      const std::function<void(const std::string&)>& warn);

}  // namespace starling
