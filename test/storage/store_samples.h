// Sample records and a store opener shared by the storage tests.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "storage/sqlite_db.h"
#include "storage/sqlite_state_store.h"

namespace nodehook {

inline ObjectRecord SampleObject(const std::string& uid,
                                 const std::string& resource = "widgets.example.com/v1") {
  ObjectRecord r;
  r.uid = uid;
  r.resource = resource;
  r.namespace_name = "ns";
  r.name = "widget-" + uid;
  r.essence = R"({"spec":{"size":3}})";
  r.last_object = R"({"metadata":{"uid":")" + uid + R"("}})";
  r.handled_at_ms = 1'700'000'000'123;
  return r;
}

inline HandlerRecord SampleHandler(const std::string& uid, const std::string& handler) {
  HandlerRecord r;
  r.uid = uid;
  r.handler = handler;
  r.resource = "widgets.example.com/v1";
  r.namespace_name = "ns";
  r.name = "widget-" + uid;
  r.retries = 2;
  r.first_start_ms = 1'700'000'000'000;
  r.next_attempt_ms = 1'700'000'060'000;
  r.last_outcome = "failed";
  r.last_message = "exit code 1: \"boom\"";
  r.target = "sha256:abc";
  return r;
}

// SampleObject(uid) whose stored object holds about `bytes` bytes (still a JSON object, as a
// stored object must be): fills a page cap or a small disk quickly.
inline ObjectRecord SizedObject(const std::string& uid, size_t bytes) {
  ObjectRecord o = SampleObject(uid);
  o.last_object = "{" + std::string(bytes, 'o') + "}";
  return o;
}

// One observed change of widget `uid` whose spec.size is `size`.
inline EventRecord SampleEvent(const std::string& uid, const std::string& type, int size) {
  EventRecord e;
  e.uid = uid;
  e.resource = "widgets.example.com/v1";
  e.namespace_name = "ns";
  e.name = "w-" + uid;
  e.type = type;
  e.object = R"({"spec":{"size":)" + std::to_string(size) + "}}";
  e.observed_at_ms = 1000 + size;
  return e;
}

// Opens a store or fails the test with the store's message.
inline std::unique_ptr<SqliteStateStore> OpenStore(const std::string& path,
                                                   const std::string& node = "node-a") {
  auto store = SqliteStateStore::Open(path, node, StoreOptions{});
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  return std::move(*store);
}

// Writes a state file by hand, as an older or newer nodehook left it (or a person edited it): opens
// `path` with SqliteDb and runs each statement (as `label`), each of which must succeed.
inline void RawExec(const std::string& path, const std::string& label, const std::vector<std::string>& statements) {
  auto db = SqliteDb::Open(path);
  REQUIRE(db.ok());
  for (const std::string& sql : statements) {
    Status status = (*db)->Exec(label, sql);
    INFO(status.ToString());
    REQUIRE(status.ok());
  }
}

}  // namespace nodehook
