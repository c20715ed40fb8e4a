// An agent config file as an operator might (mis)write it: parsed and validated, with no flags
// and no environment. Errors must be reported, never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nodehook::ConfigResult result = nodehook::ParseConfig(text, nodehook::ConfigSources{});
  for (const nodehook::ConfigError& error : result.errors) (void)error.ToString("fuzz.json");
  return 0;
}
