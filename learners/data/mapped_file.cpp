// Read-only mappings of whole files (learners/data/mapped_file.h).
#include "learners/data/mapped_file.h"

#include "learners/data/dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace starling {

ByteStorage::~ByteStorage() {
  if (map) munmap(map, map_bytes);
}

void map_file(const std::string& path, std::size_t min_bytes, ByteStorage& storage) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const auto bytes = static_cast<std::size_t>(st.st_size);
  void* map = stat_ok && bytes >= min_bytes && bytes > 0 ? ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (map == MAP_FAILED) throw DataError(path + ": truncated or unreadable (no complete header)");
  storage.map = map;
  storage.map_bytes = bytes;
}

}  // namespace starling
