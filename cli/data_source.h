#pragma once
// Where a run's data comes from: Fashion-MNIST (cached, packed) or the synthetic set.
#include "cli/config.h"
#include "learners/dataset_formats.h"

#include <string>

namespace starling::cli {

/// The packed-dataset cache: run.data_dir, else $STARLING_DATA_DIR, else ~/.cache/starling.
std::string data_cache_dir(const Config& config);

/// Loads the configured dataset; throws DataError with a message a user can act on.
TrainTest load_data(const Config& config);

/// Creates the directory that will hold `path`; throws std::runtime_error.
void ensure_parent_dir(const std::string& path);

}  // namespace starling::cli
