#include "agent/base/interned.h"

#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

namespace nodehook {
namespace {

TEST_CASE("equal texts intern to one copy, which outlives the text it was made from") {
  std::string_view first;
  {
    std::string text = "widgets.example.com/v1";
    first = Intern(text);
  }
  const std::string_view again = Intern(std::string("widgets.example.com/") + "v1");
  CHECK(again == "widgets.example.com/v1");
  CHECK(again.data() == first.data());  // the same copy, not an equal one
  CHECK(Intern("gadgets.example.com/v1").data() != first.data());
}

TEST_CASE("threads interning the same texts at once all get the one copy") {
  std::vector<const char*> seen(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, i] {
      for (int n = 0; n < 1000; ++n) Intern("r" + std::to_string(n));
      seen[i] = Intern("r7").data();
    });
  }
  for (auto& t : threads) t.join();
  for (const char* p : seen) CHECK(p == seen[0]);
}

TEST_CASE("an InternedText is one pointer to the interned copy and compares as its text") {
  static_assert(sizeof(InternedText) == sizeof(void*));
  const InternedText a(std::string("widgets.example.com/") + "v1");
  const InternedText b = std::string_view("widgets.example.com/v1");
  CHECK(a.view().data() == b.view().data());
  CHECK(a.view().data() == Intern("widgets.example.com/v1").data());
  CHECK(a == "widgets.example.com/v1");
  CHECK(a != "gadgets.example.com/v1");
  CHECK(InternedText("a") < InternedText("b"));
  CHECK_FALSE(InternedText("b") < InternedText("a"));
  CHECK(InternedText().view().empty());
}

}  // namespace
}  // namespace nodehook
