// FakeLeaseServer: one Lease ("test/lease") kept in an InMemoryApi, with the API server's
// optimistic concurrency (every write gets a new resourceVersion; a write with a stale one, or a
// create of an existing Lease, is kConflict) and the Lease's JSON as the agent writes and reads
// it. Each agent talks to it through its own Connection, which a test can cut (every call fails
// with kUnavailable) to simulate an outage or a network cut for that agent alone. Records every
// successful write. Thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/kube/client/lease_client.h"
#include "test/fakes/in_memory_api.h"

namespace nodehook {

class FakeLeaseServer {
 public:
  class Connection final : public LeaseClient {
   public:
    explicit Connection(FakeLeaseServer& server) : api_(server.api_) {}
    Result<LeaseRecord> Get() override {
      if (cut_) return UnavailableError("connection cut");
      return Parsed(api_.Get(ObjectRef{KubeLeaseClient::LeasesResource(), kNamespace, kName}));
    }
    Result<LeaseRecord> Create(const LeaseRecord& record) override {
      if (cut_) return UnavailableError("connection cut");
      LeaseRecord fresh = record;
      fresh.resource_version.clear();
      return Parsed(api_.CreateObject(kNamespace, Json(fresh)));
    }
    Result<LeaseRecord> Update(const LeaseRecord& record) override {
      if (cut_) return UnavailableError("connection cut");
      return Parsed(api_.Replace(ObjectRef{KubeLeaseClient::LeasesResource(), kNamespace, kName}, Json(record)));
    }
    std::string Describe() const override { return std::string(kNamespace) + "/" + kName; }
    void Cut(bool cut) { cut_ = cut; }

   private:
    InMemoryApi& api_;
    std::atomic<bool> cut_{false};
  };

  std::unique_ptr<Connection> Connect() { return std::make_unique<Connection>(*this); }

  std::optional<LeaseRecord> record() const {
    auto object = api_.Find(kName);
    if (!object) return std::nullopt;
    return *ParseLease(object->json);
  }
  // Another writer (an agent outside the test's control) changes the Lease.
  void Overwrite(LeaseRecord record) {
    record.resource_version.clear();
    api_.Put(kNamespace, Json(record));
  }
  // Someone deletes the Lease (kubectl delete, a namespace cleanup).
  void Delete() { api_.Remove(kName); }
  std::vector<LeaseRecord> writes() const {
    std::vector<LeaseRecord> out;
    for (const KubeObject& o : api_.History()) out.push_back(*ParseLease(o.json));
    return out;
  }

 private:
  static constexpr const char* kNamespace = "test";
  static constexpr const char* kName = "lease";
  static std::string Json(const LeaseRecord& record) {
    return LeaseJson(kNamespace, kName, record, {}, LeaseNotes(record));
  }
  static Result<LeaseRecord> Parsed(const Result<KubeObject>& object) {
    if (!object.ok()) return object.status();
    return ParseLease(object->json);
  }

  InMemoryApi api_;
};

}  // namespace nodehook
