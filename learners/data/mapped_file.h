#pragma once
// The bytes a packed dataset or text is read from: a whole file mapped read-only, or bytes
// held in memory (a set built here). Unmapped when the last owner lets go.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace starling {

struct ByteStorage {
  std::vector<uint8_t> owned;  // bytes held in memory
  void* map = nullptr;         // or a read-only mapping of a whole file
  std::size_t map_bytes = 0;

  ByteStorage() = default;
  ByteStorage(const ByteStorage&) = delete;
  ByteStorage& operator=(const ByteStorage&) = delete;
  ~ByteStorage();
};

/// Maps the whole file at `path` into `storage`; throws DataError (learners/data/dataset.h) naming
/// the path when it cannot be opened or holds fewer than `min_bytes`.
void map_file(const std::string& path, std::size_t min_bytes, ByteStorage& storage);

}  // namespace starling
