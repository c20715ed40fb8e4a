// FakeLeaseServer: one Lease held in memory with the API server's optimistic concurrency
// (every write gets a new resourceVersion; a write with a stale one, or a create of an existing
// Lease, is kConflict). Each agent talks to it through its own Connection, which a test can cut
// (every call fails with kUnavailable) to simulate an outage or a network cut for that agent
// alone. Records every successful write. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/kube/client/lease_client.h"

namespace nodehook {

class FakeLeaseServer {
 public:
  class Connection final : public LeaseClient {
   public:
    explicit Connection(FakeLeaseServer& server) : server_(server) {}
    Result<LeaseRecord> Get() override {
      std::lock_guard<std::mutex> lock(server_.mu_);
      if (cut_) return UnavailableError("connection cut");
      if (!server_.record_) return NotFoundError("lease not found");
      return *server_.record_;
    }
    Result<LeaseRecord> Create(const LeaseRecord& record) override {
      std::lock_guard<std::mutex> lock(server_.mu_);
      if (cut_) return UnavailableError("connection cut");
      if (server_.record_) return Status(StatusCode::kConflict, "lease already exists");
      return server_.StoreLocked(record);
    }
    Result<LeaseRecord> Update(const LeaseRecord& record) override {
      std::lock_guard<std::mutex> lock(server_.mu_);
      if (cut_) return UnavailableError("connection cut");
      if (!server_.record_) return NotFoundError("lease not found");
      if (record.resource_version != server_.record_->resource_version) {
        return Status(StatusCode::kConflict, "the object has been modified");
      }
      return server_.StoreLocked(record);
    }
    std::string Describe() const override { return "test/lease"; }
    void Cut(bool cut) {
      std::lock_guard<std::mutex> lock(server_.mu_);
      cut_ = cut;
    }

   private:
    FakeLeaseServer& server_;
    bool cut_ = false;  // guarded by server_.mu_
  };

  std::unique_ptr<Connection> Connect() { return std::make_unique<Connection>(*this); }

  std::optional<LeaseRecord> record() const {
    std::lock_guard<std::mutex> lock(mu_);
    return record_;
  }
  // Another writer (an agent outside the test's control) changes the Lease.
  void Overwrite(LeaseRecord record) {
    std::lock_guard<std::mutex> lock(mu_);
    StoreLocked(std::move(record));
  }
  // Someone deletes the Lease (kubectl delete, a namespace cleanup).
  void Delete() {
    std::lock_guard<std::mutex> lock(mu_);
    record_.reset();
  }
  std::vector<LeaseRecord> writes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return writes_;
  }

 private:
  LeaseRecord StoreLocked(LeaseRecord record) {
    record.resource_version = std::to_string(++last_version_);
    record_ = record;
    writes_.push_back(record);
    return record;
  }

  mutable std::mutex mu_;
  std::optional<LeaseRecord> record_;
  std::vector<LeaseRecord> writes_;
  int last_version_ = 100;
};

}  // namespace nodehook
