// state_seed: a stand-in for the agent in the `nodehook state` round-trip test (state_cli_test.sh).
//   state_seed seed FILE NODE   writes a handled object, a failing create and a failing update,
//                               a failing create whose message holds terminal escapes, and a
//                               create that failed permanently
//   state_seed take FILE NODE   prints and removes the pending retry requests, as an agent would
#include <cstdio>
#include <string>

#include "storage/sqlite_state_store.h"

using nodehook::HandlerRecord;
using nodehook::ObjectRecord;

namespace {

HandlerRecord Failing(const std::string& uid, const std::string& name, const std::string& handler) {
  HandlerRecord h;
  h.uid = uid;
  h.handler = handler;
  h.resource = "widgets.example.com/v1";
  h.namespace_name = "demo";
  h.name = name;
  h.retries = 3;
  h.first_start_ms = 1'700'000'000'000;
  h.next_attempt_ms = 4'000'000'000'000;  // far in the future, so a retry visibly moves it
  h.last_outcome = "failed";
  h.last_message = "exited 1: disk busy";
  h.target = "sha256:abc";
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: state_seed seed|take FILE NODE\n");
    return 2;
  }
  std::string mode = argv[1];
  auto store = nodehook::SqliteStateStore::Open(argv[2], argv[3], nodehook::StoreOptions{});
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  nodehook::Status status;
  if (mode == "seed") {
    ObjectRecord o{"u-alpha", "widgets.example.com/v1", "demo", "alpha", R"({"spec":{"size":1}})", "{}", 1'700'000'000'000};
    status = (*store)->RecordHandled(o, "create");
    if (status.ok()) status = (*store)->RecordAttempt(Failing("u-beta", "beta", "create"));
    if (status.ok()) status = (*store)->RecordAttempt(Failing("u-beta", "beta", "resume"));
    HandlerRecord rude = Failing("u-gamma", "gamma", "create");  // a hook that prints terminal escapes
    rude.last_message = "exited 1: \x1b[2J\x1b]0;owned\x07 \xc2\x9b" "31m gone";
    if (status.ok()) status = (*store)->RecordAttempt(rude);
    HandlerRecord given_up = Failing("u-delta", "delta", "create");  // retry limits reached
    given_up.last_outcome = nodehook::kOutcomePermanentFailure;
    given_up.next_attempt_ms = 0;
    if (status.ok()) status = (*store)->RecordAttempt(given_up);
  } else if (mode == "take") {
    auto taken = (*store)->TakeRetryRequests();
    status = taken.status();
    if (taken.ok()) {
      for (const auto& r : *taken) std::printf("%s %s\n", r.uid.c_str(), r.handler.empty() ? "*" : r.handler.c_str());
    }
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
