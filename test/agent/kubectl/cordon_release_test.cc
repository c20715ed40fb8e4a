#include <catch2/catch.hpp>

#include <sstream>

#include "agent/kubectl/cordon_release.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

const std::string kOurs = "nodehook.io/cordoned-aaaaaaaaaa.0123456789ab";
const std::string kOursToo = "nodehook.io/cordoned-aaaaaaaaaa.ba9876543210";
const std::string kOtherInstall = "nodehook.io/cordoned-cccccccccc.0123456789ab";

std::string Mark(const std::string& object, const std::string& failed = "") {
  std::string value = R"({"object":")" + object + R"(","uid":"u","state":"s1")";
  if (!failed.empty()) value += R"(,"failed":")" + failed + "\"";
  value += "}";
  // As an annotation value inside the Node's JSON.
  std::string quoted;
  for (char c : value) {
    if (c == '"') quoted += '\\';
    quoted += c;
  }
  return quoted;
}

KubeObject Node(const std::string& name, bool unschedulable, const std::string& annotations) {
  KubeObject o;
  o.meta = {"uid-" + name, "", name, "5", false};
  o.json = R"({"metadata":{"name":")" + name + R"(","resourceVersion":"5","annotations":{)" + annotations +
           R"(}},"spec":{"unschedulable":)" + (unschedulable ? "true" : "false") + "}}";
  return o;
}

void Serve(FakeKubeClient& client, const std::vector<KubeObject>& nodes) {
  ObjectList list;
  list.items = nodes;
  client.QueueList(list);
  for (const KubeObject& node : nodes) client.PutObject(node);
}

}  // namespace

TEST_CASE("the cordons of work in progress are given back; failed nodes and other installs' marks are left") {
  FakeKubeClient client;
  Serve(client, {Node("node-1", true, "\"" + kOurs + "\":\"" + Mark("shop/w1") + "\""),
                 Node("node-2", true, "\"" + kOurs + "\":\"" + Mark("shop/w1", "drain timed out") + "\""),
                 Node("node-3", true, "\"" + kOtherInstall + "\":\"" + Mark("shop/w1") + "\""),
                 Node("node-4", false, "\"" + kOurs + "\":\"" + Mark("shop/w2") + "\""),
                 Node("node-5", true, "")});
  std::ostringstream out, err;
  CordonReleaseTotals totals = ReleaseCordons(client, {"aaaaaaaaaa"}, false, out, err);
  CHECK(err.str().empty());
  CHECK(totals.marks == 3);
  CHECK(totals.unmarked == 2);
  CHECK(totals.uncordoned == 1);
  CHECK(totals.kept_failed == 1);
  CHECK(totals.failures == 0);
  REQUIRE(client.patches().size() == 2);
  CHECK(client.patches()[0].name == "node-1");
  CHECK(client.patches()[0].type == PatchType::kMerge);
  CHECK(client.patches()[0].body ==
        R"({"metadata":{"resourceVersion":"5","annotations":{")" + kOurs + R"(":null}},"spec":{"unschedulable":null}})");
  CHECK(client.patches()[1].name == "node-4");  // someone uncordoned it: only the mark comes off
  CHECK(client.patches()[1].body == R"({"metadata":{"resourceVersion":"5","annotations":{")" + kOurs + R"(":null}}})");
  CHECK(out.str() ==
        "node-1: uncordoned (shop/w1, state s1)\n"
        "node-2: kept cordoned for a person to look at (shop/w1, state s1; failed: drain timed out); "
        "--uncordon-failed gives it back\n"
        "node-4: mark removed; someone had uncordoned it (shop/w2, state s1)\n");
}

TEST_CASE("with failed_too a failed node is given back; a second mark keeps the node cordoned") {
  FakeKubeClient client;
  Serve(client, {Node("node-2", true,
                      "\"" + kOurs + "\":\"" + Mark("shop/w1", "drain timed out") + "\",\"" + kOtherInstall + "\":\"" +
                          Mark("shop/w9") + "\"")});
  std::ostringstream out, err;
  CordonReleaseTotals totals = ReleaseCordons(client, {"aaaaaaaaaa"}, true, out, err);
  CHECK(totals.unmarked == 1);
  CHECK(totals.uncordoned == 0);
  REQUIRE(client.patches().size() == 1);
  CHECK(client.patches()[0].body.find("unschedulable") == std::string::npos);
  CHECK(out.str() == "node-2: mark removed; another nodehook mark keeps it cordoned (shop/w1, state s1)\n");
}

TEST_CASE("a failed list or a refused write is counted and said, and the other nodes still go") {
  SECTION("list") {
    FakeKubeClient client;
    client.QueueList(Status(StatusCode::kForbidden, "nodes is forbidden"));
    std::ostringstream out, err;
    CHECK(ReleaseCordons(client, {"aaaaaaaaaa"}, false, out, err).failures == 1);
    CHECK(err.str() == "cannot list nodes (to give back the cordons of node steps): nodes is forbidden\n");
  }
  SECTION("write") {
    FakeKubeClient client;
    Serve(client, {Node("node-1", true, "\"" + kOurs + "\":\"" + Mark("shop/w1") + "\""),
                   Node("node-2", true, "\"" + kOursToo + "\":\"" + Mark("shop/w2") + "\"")});
    client.QueuePatchResult(Status(StatusCode::kForbidden, "patch forbidden"));
    std::ostringstream out, err;
    CordonReleaseTotals totals = ReleaseCordons(client, {"aaaaaaaaaa"}, false, out, err);
    CHECK(totals.failures == 1);
    CHECK(totals.uncordoned == 1);
    CHECK(err.str() == "node-1: cannot give back the cordon " + kOurs + ": patch forbidden\n");
    CHECK(out.str() == "node-2: uncordoned (shop/w2, state s1)\n");
  }
}

TEST_CASE("a mark's words are escaped before they reach the terminal") {
  FakeKubeClient client;
  Serve(client, {Node("node-2", true, "\"" + kOurs + "\":\"" + Mark("shop/w1", "hook said \\\\u001b[2J") + "\"")});
  std::ostringstream out, err;
  ReleaseCordons(client, {"aaaaaaaaaa"}, false, out, err);
  CHECK(out.str().find('\x1b') == std::string::npos);
  CHECK(out.str().find("hook said \\x1b[2J") != std::string::npos);
}
