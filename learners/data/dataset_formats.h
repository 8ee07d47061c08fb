#pragma once
// Image sets in the formats they are published in, converted once into Starling's packed
// format (learners/data/dataset.h) and cached: IDX files (MNIST, Fashion-MNIST, KMNIST, EMNIST…)
// and CIFAR-10's binary batches. Nothing is downloaded: the files must be on disk.
// A missing, truncated or corrupted source file is a DataError that names its path.
#include "learners/data/dataset.h"

#include <functional>
#include <string>
#include <vector>

namespace starling {

using Warn = std::function<void(const std::string&)>;

/// Creates the packed-data cache folder; throws DataError naming it.
void make_cache_dir(const std::string& cache_dir);

/// A name for the source files' current contents (their paths, sizes and modification
/// times), so that a cache built from other or changed files is not taken for theirs.
std::string source_stamp(const std::vector<std::string>& paths);

/// An IDX image set in `source_dir`: train-images-idx3-ubyte, train-labels-idx1-ubyte,
/// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each gzip-compressed (.gz) or plain.
/// Image size from the files, class count = largest training label + 1. Cached in
/// `cache_dir` under a name derived from the source files' paths, sizes and times, so a
/// changed source is converted again; a cached file that fails validation is reported
/// through `warn` and rebuilt.
TrainTest load_idx_set(const std::string& cache_dir, const std::string& source_dir, const Warn& warn);

/// Fashion-MNIST: the IDX set in `source_dir`, or in Debian's /usr/share/datasets/fashion-mnist
/// when empty (the error then names the package dataset-fashion-mnist).
TrainTest load_fashion_mnist(const std::string& cache_dir, const std::string& source_dir, const Warn& warn);

/// CIFAR-10's image shape and class count, fixed by the format.
inline constexpr Shape kCifar10Shape{32, 32, 3};
inline constexpr int kCifar10Classes = 10;

/// CIFAR-10's binary version in `source_dir`: data_batch_1.bin … data_batch_5.bin for
/// training and test_batch.bin, each 10000 records of a label byte and 32×32×3 pixels
/// stored channel by channel (converted to Starling's height × width × channel order).
TrainTest load_cifar10(const std::string& cache_dir, const std::string& source_dir, const Warn& warn);

}  // namespace starling
