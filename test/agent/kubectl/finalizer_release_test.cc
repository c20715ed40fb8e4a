#include <catch2/catch.hpp>

#include <sstream>

#include "agent/kubectl/finalizer_release.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

const ResourceRef kWidgets{"example.com", "v1", "widgets", "", "app=x"};

KubeObject Widget(const std::string& name, const std::string& finalizers) {
  KubeObject o;
  o.meta = {"uid-" + name, "shop", name, "7", false};
  o.json = R"({"metadata":{"name":")" + name + R"(","namespace":"shop","resourceVersion":"7","finalizers":[)" +
           finalizers + "]}}";
  return o;
}

ObjectList Page(std::vector<KubeObject> items, std::string continue_token = "") {
  ObjectList list;
  list.items = std::move(items);
  list.continue_token = std::move(continue_token);
  return list;
}

}  // namespace

TEST_CASE("release removes every nodehook finalizer, keeps the others, and reads every page without selectors") {
  FakeKubeClient client;
  client.QueueList(Page({Widget("a", R"("nodehook.io/node-a","example.com/keep","nodehook.io/node-b")")}, "more"));
  client.QueueList(Page({Widget("b", R"("example.com/keep")"), Widget("c", "")}));
  std::ostringstream out, err;
  ReleaseTotals totals = ReleaseFinalizers(client, {kWidgets}, out, err);
  CHECK(err.str().empty());
  CHECK(totals.objects == 3);
  CHECK(totals.released_objects == 1);
  CHECK(totals.finalizers == 2);
  CHECK(totals.failures == 0);
  REQUIRE(client.patches().size() == 2);
  for (const auto& patch : client.patches()) {
    CHECK(patch.name == "a");
    CHECK(patch.type == PatchType::kJson);
    CHECK(patch.body.find("\"op\":\"test\"") != std::string::npos);  // guarded by the list it changes
  }
  CHECK(client.patches()[1].body.find("nodehook.io/node-a") == std::string::npos);  // the list after the first removal
  REQUIRE(client.list_resources().size() == 2);
  CHECK(client.list_resources()[0].label_selector.empty());
  CHECK(out.str() == "released 2 finalizers from widgets.example.com/v1 shop/a\n");
}

TEST_CASE("release reads an object again when its finalizer list changed under it, and counts a vanished one as done") {
  FakeKubeClient client;
  client.QueueList(Page({Widget("a", R"("nodehook.io/node-a")"), Widget("gone", R"("nodehook.io/node-a")")}));
  client.QueuePatchResult(Status(StatusCode::kInvalid, "HTTP 422: the server rejected our request"));
  client.PutObject(Widget("a", R"("nodehook.io/node-a","nodehook.io/node-c")"));
  client.QueuePatchResult(Status::Ok());
  client.QueuePatchResult(Status::Ok());
  client.QueuePatchResult(NotFoundError("gone"));
  std::ostringstream out, err;
  ReleaseTotals totals = ReleaseFinalizers(client, {kWidgets}, out, err);
  CHECK(err.str().empty());
  CHECK(totals.finalizers == 2);  // node-a and node-c from "a"; nothing left to do on "gone"
  CHECK(totals.failures == 0);
  CHECK(client.get_call_count() == 1);
}

TEST_CASE("release reports an object it cannot patch and a resource it cannot list, and goes on") {
  FakeKubeClient client;
  client.QueueList(Status(StatusCode::kForbidden, "HTTP 403: cannot list"));
  client.QueueList(Page({Widget("a", R"("nodehook.io/node-a")"), Widget("b", R"("nodehook.io/node-b")")}));
  client.QueuePatchResult(Status(StatusCode::kForbidden, "HTTP 403: cannot patch"));
  std::ostringstream out, err;
  ResourceRef gadgets{"example.com", "v1", "gadgets", "", ""};
  ReleaseTotals totals = ReleaseFinalizers(client, {gadgets, kWidgets}, out, err);
  CHECK(totals.failures == 2);
  CHECK(totals.finalizers == 1);
  CHECK(err.str() == "cannot list gadgets.example.com/v1: HTTP 403: cannot list\n"
                     "cannot release widgets.example.com/v1 shop/a: HTTP 403: cannot patch\n");
}
