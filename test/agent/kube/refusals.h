// CheckRefusals: a table of inputs that a parser must each refuse with a message that contains
// the case's expected text (and `common`, when given) and, when `code` is set, with that code.
// For the parsers of the kube client and credentials tests (JSON, watch lines, YAML, kubeconfig,
// ExecCredential).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "agent/base/status.h"

namespace nodehook {

struct Refusal {
  std::string input;
  std::string expected;
};

template <typename Parse>
void CheckRefusals(const std::vector<Refusal>& cases, Parse parse, std::optional<StatusCode> code,
                   const std::string& common = "") {
  for (const Refusal& c : cases) {
    INFO(c.input);
    auto result = parse(c.input);
    REQUIRE_FALSE(result.ok());
    if (code) CHECK(result.status().code() == *code);
    CHECK_THAT(result.status().message(), Catch::Contains(common) && Catch::Contains(c.expected));
  }
}

}  // namespace nodehook
