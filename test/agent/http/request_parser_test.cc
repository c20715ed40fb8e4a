#include <catch2/catch.hpp>

#include "agent/http/request_parser.h"

namespace nodehook {
namespace {

TEST_CASE("a GET with a query is split into method, path and query") {
  LocalRequest req;
  REQUIRE(ParseHttpRequest("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", 1024, &req) == ParseOutcome::kComplete);
  CHECK(req.method == "GET");
  CHECK(req.path == "/metrics");
  CHECK(req.query == "x=1");
  CHECK(req.body.empty());
}

TEST_CASE("a request is incomplete until its head and Content-Length body have arrived") {
  LocalRequest req;
  CHECK(ParseHttpRequest("GET /healthz HTTP/1.1\r\nHost:", 1024, &req) == ParseOutcome::kIncomplete);
  std::string post = "POST /v1/retry HTTP/1.1\r\nContent-Length: 5\r\n\r\nab";
  CHECK(ParseHttpRequest(post, 1024, &req) == ParseOutcome::kIncomplete);
  REQUIRE(ParseHttpRequest(post + "cde", 1024, &req) == ParseOutcome::kComplete);
  CHECK(req.body == "abcde");
}

TEST_CASE("garbage, oversized and chunked requests are refused with their own outcome") {
  LocalRequest req;
  CHECK(ParseHttpRequest("\x01\x02 hello\r\n\r\n", 1024, &req) == ParseOutcome::kMalformed);
  CHECK(ParseHttpRequest("get / HTTP/1.1\r\n\r\n", 1024, &req) == ParseOutcome::kMalformed);
  CHECK(ParseHttpRequest("GET noslash HTTP/1.1\r\n\r\n", 1024, &req) == ParseOutcome::kMalformed);
  CHECK(ParseHttpRequest("GET / HTTP/1.1\r\nno colon here\r\n\r\n", 1024, &req) == ParseOutcome::kMalformed);
  CHECK(ParseHttpRequest("POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n", 1024, &req) == ParseOutcome::kMalformed);
  CHECK(ParseHttpRequest(std::string(2000, 'G'), 1024, &req) == ParseOutcome::kTooLarge);
  CHECK(ParseHttpRequest("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 1024, &req) ==
        ParseOutcome::kTooLarge);
  CHECK(ParseHttpRequest("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 1024, &req) ==
        ParseOutcome::kNeedLength);
}

}  // namespace
}  // namespace nodehook
