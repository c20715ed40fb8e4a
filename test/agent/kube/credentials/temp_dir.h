// TempDir: a fresh directory under /tmp, removed with everything in it on destruction.
// Single-threaded test helper.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace nodehook {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/nodehook-kube-test-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes `content` to path()/name (creating subdirectories) and returns the full path.
  std::string Write(const std::string& name, const std::string& content) const {
    std::filesystem::path full = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream(full, std::ios::binary) << content;
    return full.string();
  }

 private:
  std::string path_;
};

}  // namespace nodehook
