// A kubeconfig file (YAML or JSON) loaded through the public loader. The input is written to a
// file in a private directory, so relative credential paths resolve there and find nothing.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/kube/credentials/connection_config.h"

namespace {

char g_dir[] = "/tmp/nodehook-kubeconfig-fuzz-XXXXXX";

void RemoveDir() {
  (void)std::remove((std::string(g_dir) + "/config").c_str());
  (void)rmdir(g_dir);
}

// A directory of our own, made once per process and removed at exit.
const std::string& KubeconfigPath() {
  static const std::string path = [] {
    if (!mkdtemp(g_dir)) std::abort();
    if (std::atexit(RemoveDir) != 0) std::abort();
    return std::string(g_dir) + "/config";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = KubeconfigPath();
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
  if (std::fclose(file) != 0) std::abort();
  (void)nodehook::LoadKubeconfig(path);
  return 0;
}
