#include "cli/data_source.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>

namespace starling::cli {

std::string data_cache_dir(const Config& config) {
  if (!config.run.data_dir.empty()) return config.run.data_dir;
  if (const char* env = std::getenv("STARLING_DATA_DIR"); env && *env) return env;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/starling";
  return "data";
}

TrainTest load_data(const Config& config) {
  const DataOptions& d = config.data;
  if (d.dataset == "synthetic")
    return make_synthetic(static_cast<uint32_t>(d.synthetic_train), static_cast<uint32_t>(d.synthetic_test),
                          config.run.seed);
  const Warn warn = [](const std::string& message) { spdlog::warn("{}", message); };
  if (d.dataset == "idx") return load_idx_set(data_cache_dir(config), d.path, warn);
  if (d.dataset == "cifar10") return load_cifar10(data_cache_dir(config), d.path, warn);
  return load_fashion_mnist(data_cache_dir(config), d.path, warn);
}

void ensure_parent_dir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

}  // namespace starling::cli
