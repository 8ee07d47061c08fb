#pragma once
// Reader for the IDX files of MNIST-style datasets, gzip-compressed or plain.
#include <cstdint>
#include <string>
#include <vector>

namespace starling {

struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;  // unsigned bytes, row-major
};

/// Reads an IDX file of unsigned bytes with `expected_rank` dimensions; throws DataError on
/// a missing file, wrong magic, wrong rank, or a size that does not match its dimensions.
IdxArray read_idx(const std::string& path, int expected_rank);

}  // namespace starling
