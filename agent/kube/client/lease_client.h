// LeaseClient: reads and writes one coordination.k8s.io/v1 Lease, for leader election.
// Errors are Status codes: kNotFound (no Lease yet), kConflict (409: the resourceVersion was
// stale, or a create lost to another), anything else is a failed attempt.
// KubeLeaseClient talks to the API server through a KubeClient; thread-safe like it.
#pragma once

#include <string>

#include "agent/kube/client/kube_client.h"
#include "agent/kube/client/lease_record.h"

namespace nodehook {

class LeaseClient {
 public:
  virtual ~LeaseClient() = default;
  virtual Result<LeaseRecord> Get() = 0;
  // Both return the record as stored, with its new resourceVersion.
  virtual Result<LeaseRecord> Create(const LeaseRecord& record) = 0;
  // A PUT preconditioned on record.resource_version: kConflict when it is stale.
  virtual Result<LeaseRecord> Update(const LeaseRecord& record) = 0;
  // "namespace/name", for logs.
  virtual std::string Describe() const = 0;
};

class KubeLeaseClient final : public LeaseClient {
 public:
  // `client` must outlive this.
  KubeLeaseClient(KubeClient& client, std::string namespace_name, std::string name);

  Result<LeaseRecord> Get() override;
  Result<LeaseRecord> Create(const LeaseRecord& record) override;
  Result<LeaseRecord> Update(const LeaseRecord& record) override;
  std::string Describe() const override { return namespace_name_ + "/" + name_; }

  static ResourceRef LeasesResource();

 private:
  KubeClient& client_;
  const std::string namespace_name_;
  const std::string name_;
};

}  // namespace nodehook
