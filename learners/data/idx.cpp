#include "learners/data/idx.h"

#include "learners/data/dataset.h"

#include <zlib.h>

#include <memory>

namespace starling {
namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

uint32_t big_endian(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

bool read_exact(gzFile f, void* out, std::size_t bytes) {
  auto* dst = static_cast<unsigned char*>(out);
  while (bytes > 0) {
    const unsigned chunk = bytes > (1u << 30) ? (1u << 30) : static_cast<unsigned>(bytes);
    const int got = gzread(f, dst, chunk);
    if (got <= 0) return false;
    dst += got;
    bytes -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace

IdxArray read_idx(const std::string& path, int expected_rank) {
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file) throw DataError(path + ": cannot open");
  unsigned char magic[4];
  if (!read_exact(file.get(), magic, 4)) throw DataError(path + ": truncated header");
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08)
    throw DataError(path + ": not an IDX file of unsigned bytes (bad magic)");
  if (magic[3] != expected_rank)
    throw DataError(path + ": expected " + std::to_string(expected_rank) + " dimensions, found " +
                    std::to_string(magic[3]));
  IdxArray out;
  std::size_t total = 1;
  for (int d = 0; d < expected_rank; ++d) {
    unsigned char dim[4];
    if (!read_exact(file.get(), dim, 4)) throw DataError(path + ": truncated header");
    out.dims.push_back(big_endian(dim));
    total *= out.dims.back();
    if (total > (std::size_t{1} << 34)) throw DataError(path + ": implausible dimensions");
  }
  out.data.resize(total);
  if (!read_exact(file.get(), out.data.data(), total))
    throw DataError(path + ": truncated (fewer bytes than its dimensions promise)");
  unsigned char extra;
  if (gzread(file.get(), &extra, 1) != 0) throw DataError(path + ": trailing bytes after the data");
  int err = Z_OK;
  gzerror(file.get(), &err);
  if (err != Z_OK && err != Z_STREAM_END) throw DataError(path + ": corrupted compressed stream");
  return out;
}

}  // namespace starling
