#include <catch2/catch.hpp>

#include <string>

#include "agent/hooks/hook_outcome.h"

using namespace nodehook;

namespace {

ActionResult Exited(int code, std::string output = "") {
  ActionResult r;
  r.kind = ActionResult::Kind::kExited;
  r.exit_code = code;
  r.message = "exited " + std::to_string(code);
  r.output = std::move(output);
  return r;
}

ResultFileContent File(std::string json) { return std::optional<std::string>(std::move(json)); }
ResultFileContent NoFile() { return std::optional<std::string>(); }
ResultFileContent Unusable(std::string why) { return InvalidError(std::move(why)); }

}  // namespace

TEST_CASE("the exit code decides the verdict and the last output line explains it") {
  REQUIRE(ClassifyHookResult(Exited(0), NoFile()).verdict == HookVerdict::kDone);
  REQUIRE(ClassifyHookResult(Exited(75), NoFile()).verdict == HookVerdict::kRetryLater);
  REQUIRE(ClassifyHookResult(Exited(100), NoFile()).verdict == HookVerdict::kInProgress);
  HookOutcome failed = ClassifyHookResult(Exited(3, "starting\ndisk busy\n"), NoFile());
  REQUIRE(failed.verdict == HookVerdict::kFailed);
  REQUIRE(failed.message == "exited 3: disk busy");
}

TEST_CASE("the result file's delay and message are taken") {
  HookOutcome out = ClassifyHookResult(Exited(75), File(R"({"delay_seconds": 2.5, "message": "detaching"})"));
  REQUIRE(out.delay == Duration(2500));
  REQUIRE(out.message == "detaching");
}

TEST_CASE("an empty result file says nothing and is no error") {
  HookOutcome out = ClassifyHookResult(Exited(0, "ok"), File(""));
  REQUIRE(out.verdict == HookVerdict::kDone);
  REQUIRE(out.message == "exited 0: ok");
}

TEST_CASE("a delay beyond the maximum is used as the maximum, and the message says so") {
  for (const char* huge : {"1e33", "1.7976931348623157e308", "18446744073709551615", "86400.5"}) {
    HookOutcome out = ClassifyHookResult(Exited(75), File(std::string(R"({"delay_seconds": )") + huge + "}"));
    INFO(huge);
    REQUIRE(out.delay == kMaxHookDelay);
    REQUIRE(out.message.find("is more than the maximum 86400, used 86400") != std::string::npos);
  }
}

TEST_CASE("a negative or non-numeric delay is refused and the default delay applies") {
  for (const char* bad : {"-1", "-1e300", "\"soon\"", "null", "[5]"}) {
    HookOutcome out = ClassifyHookResult(Exited(75), File(std::string(R"({"delay_seconds": )") + bad + "}"));
    INFO(bad);
    REQUIRE_FALSE(out.delay.has_value());
    REQUIRE(out.message.find("delay_seconds: expected a number >= 0") != std::string::npos);
  }
}

TEST_CASE("a number too large for a double is reported as invalid JSON, with where and why") {
  HookOutcome out = ClassifyHookResult(Exited(75), File(R"({"delay_seconds": 1e400})"));
  REQUIRE_FALSE(out.delay.has_value());
  REQUIRE(out.message.find("result file ignored: invalid JSON at byte") != std::string::npos);
}

TEST_CASE("a zero or negative-zero delay means now") {
  REQUIRE(ClassifyHookResult(Exited(75), File(R"({"delay_seconds": -0})")).delay == Duration(0));
  REQUIRE(ClassifyHookResult(Exited(75), File(R"({"delay_seconds": 0})")).delay == Duration(0));
}

TEST_CASE("a result file nested thousands of levels deep is reported, not a crash") {
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  HookOutcome out = ClassifyHookResult(Exited(0), File(deep));
  REQUIRE(out.verdict == HookVerdict::kDone);
  REQUIRE(out.message.find("expected a JSON object") != std::string::npos);
}

TEST_CASE("an unusable result file turns success into failure, with the reason") {
  HookOutcome out = ClassifyHookResult(Exited(0), Unusable("result file is 52428800 bytes, the limit is 65536"));
  REQUIRE(out.verdict == HookVerdict::kFailed);
  REQUIRE(out.message == "exited 0: result file is 52428800 bytes, the limit is 65536");
  REQUIRE_FALSE(out.delay.has_value());
}

TEST_CASE("an unusable result file keeps retry-later and in-progress, with the default delay") {
  HookOutcome later = ClassifyHookResult(Exited(75), Unusable("result file is not a regular file (a FIFO)"));
  REQUIRE(later.verdict == HookVerdict::kRetryLater);
  REQUIRE_FALSE(later.delay.has_value());
  HookOutcome progress = ClassifyHookResult(Exited(100), Unusable("result file is not a regular file (a FIFO)"));
  REQUIRE(progress.verdict == HookVerdict::kInProgress);
  REQUIRE(progress.message == "exited 100: result file is not a regular file (a FIFO)");
  REQUIRE(ClassifyHookResult(Exited(2), Unusable("x")).verdict == HookVerdict::kFailed);
}

TEST_CASE("unknown keys are named, but a huge key name is cut") {
  const std::string key(10000, 'k');
  HookOutcome out = ClassifyHookResult(Exited(1), File("{\"" + key + "\": 1}"));
  REQUIRE(out.message.find("unknown key (expected delay_seconds, message, node, reboot)") != std::string::npos);
  REQUIRE(out.message.size() < 300);
}

TEST_CASE("a long hook message is kept whole for the store and cut short for the log") {
  const std::string output = "first line\n" + std::string(16000, 'x') + "the end\n";
  HookOutcome out = ClassifyHookResult(Exited(1, output), NoFile());
  REQUIRE(out.message == "exited 1: " + std::string(16000, 'x') + "the end");
  const std::string logged = out.LogMessage();
  REQUIRE(logged.size() <= kLogMessageLimit + 8);
  REQUIRE(logged.rfind("exited 1: ", 0) == 0);                       // how it ended
  REQUIRE(logged.substr(logged.size() - 7) == "the end");            // and the output's end
  REQUIRE(logged.find(" … ") != std::string::npos);
}

TEST_CASE("a short message is logged as it is") {
  HookOutcome out;
  out.message = "exited 1: disk busy";
  REQUIRE(out.LogMessage() == out.message);
}

TEST_CASE("abbreviating never cuts a UTF-8 character in two") {
  std::string text;
  for (int i = 0; i < 500; ++i) text += "\xC3\xA9\xE2\x82\xAC";  // é€
  for (size_t limit : {10, 11, 12, 13, 100, 101}) {
    const std::string cut = Abbreviate(text, limit);
    INFO(limit);
    REQUIRE((static_cast<unsigned char>(cut[0]) & 0xC0) != 0x80);
    const size_t marker = cut.find(" … ");
    REQUIRE(marker != std::string::npos);
    const unsigned char after = static_cast<unsigned char>(cut[marker + std::string(" … ").size()]);
    REQUIRE((after & 0xC0) != 0x80);
    const unsigned char before = static_cast<unsigned char>(cut[marker - 1]);
    REQUIRE((before == 0xA9 || before == 0xAC));  // the last byte of a whole character
  }
}

TEST_CASE("a result file's \"node\" is passed on as JSON text, whatever the verdict; one nested too deep is dropped") {
  HookOutcome done = ClassifyHookResult(Exited(0), File(R"({"node": {"labels": {"a.com/x": "1"}}, "message": "ok"})"));
  REQUIRE(done.verdict == HookVerdict::kDone);
  REQUIRE(done.node_outputs == R"({"labels":{"a.com/x":"1"}})");
  HookOutcome failed = ClassifyHookResult(Exited(1), File(R"({"node": {"taints": []}})"));
  REQUIRE(failed.node_outputs == R"({"taints":[]})");
  REQUIRE(ClassifyHookResult(Exited(0), NoFile()).node_outputs.empty());
  const std::string deep = std::string(30000, '[') + "1" + std::string(30000, ']');
  HookOutcome too_deep = ClassifyHookResult(Exited(0), File("{\"node\": " + deep + "}"));
  REQUIRE(too_deep.node_outputs.empty());
  REQUIRE(too_deep.message.find("node: nested deeper than node outputs are") != std::string::npos);
}

TEST_CASE("a result file asks for a reboot with \"reboot\": true, and only a boolean is taken") {
  REQUIRE(ClassifyHookResult(Exited(0), File(R"({"reboot": true})")).reboot);
  REQUIRE_FALSE(ClassifyHookResult(Exited(0), File(R"({"reboot": false})")).reboot);
  REQUIRE_FALSE(ClassifyHookResult(Exited(0), NoFile()).reboot);
  HookOutcome wrong = ClassifyHookResult(Exited(0), File(R"({"reboot": "yes"})"));
  REQUIRE_FALSE(wrong.reboot);
  REQUIRE(wrong.message.find("reboot: expected true or false") != std::string::npos);
}
