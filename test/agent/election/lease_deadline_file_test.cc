// The file through which `nodehook fence` learns how long the leader's term lasts.
#include <catch2/catch.hpp>

#include <filesystem>

#include <unistd.h>

#include "agent/election/lease_deadline_file.h"

using namespace nodehook;

TEST_CASE("the lease deadline file is written into a hook work dir that does not exist yet, and read back") {
  std::string dir = "/tmp/nodehook-deadline-test-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  REQUIRE(WriteLeaseDeadline(dir + "/lease-deadline", 123456789).ok());
  CHECK(ReadLeaseDeadline(dir + "/lease-deadline") == 123456789);
  REQUIRE(WriteLeaseDeadline(dir + "/lease-deadline", 0).ok());
  CHECK(ReadLeaseDeadline(dir + "/lease-deadline") == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a missing lease deadline file reads as a deadline already passed") {
  CHECK(ReadLeaseDeadline("/nonexistent/lease-deadline") == 0);
}
