// RequireOk: the value of `result`, which the test requires to be ok; when it is not, the
// failure shows `what` and the status' message. For the calendar tests' parsers and loaders.
#pragma once

#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "agent/base/status.h"

namespace nodehook {

template <typename T>
T RequireOk(Result<T> result, const std::string& what) {
  INFO(what << ": " << result.status().message());
  REQUIRE(result.ok());
  return std::move(result).value();
}

}  // namespace nodehook
