// POST /v1/retry: authentication, validation, and answers that never reveal pending work.
#include <catch2/catch.hpp>

#include <fstream>
#include <mutex>
#include <vector>

#include "agent/http/retry_endpoint.h"
#include "test/agent/http/raw_client.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {

const std::string kToken = "0123456789abcdef0123456789abcdef";

// What reached the sink; answers with `answer`.
struct Sink {
  std::mutex mu;
  std::vector<std::string> asked;
  Status answer = Status::Ok();
  RetrySink Fn() {
    return [this](const std::string& uid, const std::string& handler) {
      std::lock_guard<std::mutex> lock(mu);
      asked.push_back(uid + "/" + handler);
      return answer;
    };
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return asked.size();
  }
};

struct Admin {
  TempDir dir;
  Sink sink;
  std::unique_ptr<BearerTokenFile> token;
  LocalServer server{LocalServerOptions{}};
  explicit Admin(bool with_token) {
    if (with_token) {
      std::ofstream(dir.File("token")) << kToken << "\n";
      token = std::make_unique<BearerTokenFile>(dir.File("token"));
    }
    RegisterRetryEndpoint(server, sink.Fn(), token.get());
    REQUIRE(server.Start().ok());
  }
  std::string Post(const std::string& target, const std::string& headers = "") {
    return HttpCall(server.port(), "POST", target, headers);
  }
};

TEST_CASE("a retry is queued and answered 202 for any well-formed uid") {
  Admin admin(false);
  std::string resp = admin.Post("/v1/retry?uid=6f1c-uid&handler=delete");
  CHECK(StatusOf(resp) == 202);
  CHECK(BodyOf(resp) == "retry of 6f1c-uid handler delete accepted; it runs if this node has pending or failed work "
                        "for it (a permanent failure runs once more)\n");
  CHECK(admin.sink.asked == std::vector<std::string>{"6f1c-uid/delete"});
}

TEST_CASE("without the bearer token every request gets the same 401, whatever the uid") {
  Admin admin(true);
  std::string none = admin.Post("/v1/retry?uid=known-uid");
  std::string wrong = admin.Post("/v1/retry?uid=other-uid", "Authorization: Bearer " + kToken.substr(1) + "x\r\n");
  std::string malformed = admin.Post("/v1/retry", "Authorization: Basic Zm9vOmJhcg==\r\n");
  for (const std::string& resp : {none, wrong, malformed}) {
    CHECK(StatusOf(resp) == 401);
    CHECK_THAT(resp, Catch::Contains("WWW-Authenticate: Bearer"));
    CHECK(BodyOf(resp) == BodyOf(none));
  }
  CHECK(admin.sink.count() == 0);
  CHECK(StatusOf(admin.Post("/v1/retry?uid=known-uid", "Authorization: Bearer " + kToken + "\r\n")) == 202);
  CHECK(admin.sink.count() == 1);
}

TEST_CASE("a rotated token file takes effect at the next request") {
  Admin admin(true);
  std::string rotated = "fedcba9876543210fedcba9876543210";
  std::ofstream(admin.dir.File("token")) << rotated;
  CHECK(StatusOf(admin.Post("/v1/retry?uid=u", "Authorization: Bearer " + kToken + "\r\n")) == 401);
  CHECK(StatusOf(admin.Post("/v1/retry?uid=u", "Authorization: Bearer " + rotated + "\r\n")) == 202);
}

TEST_CASE("a uid or handler no Kubernetes object could have is refused before it is queued") {
  Admin admin(false);
  CHECK(StatusOf(admin.Post("/v1/retry")) == 400);
  CHECK(StatusOf(admin.Post("/v1/retry?uid=a%0Alevel=error")) == 400);
  CHECK(StatusOf(admin.Post("/v1/retry?uid=" + std::string(200, 'a'))) == 400);
  CHECK(StatusOf(admin.Post("/v1/retry?uid=u&handler=Delete;rm")) == 400);
  CHECK(admin.sink.count() == 0);
}

TEST_CASE("a full queue answers 429 with Retry-After, an agent not yet running 503") {
  Admin admin(false);
  admin.sink.answer = Status(StatusCode::kTooManyRequests, "full");
  std::string busy = admin.Post("/v1/retry?uid=u");
  CHECK(StatusOf(busy) == 429);
  CHECK_THAT(busy, Catch::Contains("Retry-After: 1\r\n"));
  admin.sink.answer = UnavailableError("not running yet: state lock /var/lib/nodehook/state.db");
  CHECK(StatusOf(admin.Post("/v1/retry?uid=u")) == 503);
}

TEST_CASE("the retry endpoint takes POST only") {
  Admin admin(false);
  CHECK(StatusOf(HttpGet(admin.server.port(), "/v1/retry?uid=u")) == 405);
}

TEST_CASE("a token file that is missing, empty or too short is refused with the reason") {
  TempDir dir;
  CHECK_THAT(BearerTokenFile(dir.File("absent")).Read().status().message(), Catch::Contains("cannot read"));
  std::ofstream(dir.File("short")) << "abc\n";
  CHECK_THAT(BearerTokenFile(dir.File("short")).Read().status().message(), Catch::Contains("at least 16 characters"));
  std::ofstream(dir.File("good")) << "  " << kToken << "\n";
  CHECK(*BearerTokenFile(dir.File("good")).Read() == kToken);
}

TEST_CASE("token comparison needs every byte and the exact length") {
  CHECK(ConstantTimeEquals(kToken, kToken));
  CHECK_FALSE(ConstantTimeEquals(kToken + "x", kToken));
  CHECK_FALSE(ConstantTimeEquals(kToken.substr(0, 31), kToken));
  CHECK_FALSE(ConstantTimeEquals("", kToken));
  std::string last = kToken;
  last.back() = 'g';
  CHECK_FALSE(ConstantTimeEquals(last, kToken));
}

}  // namespace
}  // namespace nodehook
