#pragma once
// A fresh folder of this test process's own under the system's temporary folder, removed
// with everything in it when the test is done. Shared by the suites that write files.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace starling::testing {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag = "test")
      : path(std::filesystem::temp_directory_path() / ("starling-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path.string(); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

}  // namespace starling::testing
