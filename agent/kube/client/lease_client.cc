#include "agent/kube/client/lease_client.h"

namespace nodehook {

KubeLeaseClient::KubeLeaseClient(KubeClient& client, std::string namespace_name, std::string name)
    : client_(client), namespace_name_(std::move(namespace_name)), name_(std::move(name)) {}

ResourceRef KubeLeaseClient::LeasesResource() { return ResourceRef{"coordination.k8s.io", "v1", "leases", "", ""}; }

Result<LeaseRecord> KubeLeaseClient::Get() {
  auto object = client_.Get(ObjectRef{LeasesResource(), namespace_name_, name_});
  if (!object.ok()) return object.status();
  return ParseLease(object->json);
}

Result<LeaseRecord> KubeLeaseClient::Create(const LeaseRecord& record) {
  LeaseRecord fresh = record;
  fresh.resource_version.clear();
  Status created = client_.Create(LeasesResource(), namespace_name_, LeaseJson(namespace_name_, name_, fresh, {}, LeaseNotes(fresh)));
  // 409 AlreadyExists: another agent created it first, which is a lost race like a stale update.
  if (!created.ok()) return created;
  return Get();
}

Result<LeaseRecord> KubeLeaseClient::Update(const LeaseRecord& record) {
  auto object = client_.Replace(ObjectRef{LeasesResource(), namespace_name_, name_},
                                LeaseJson(namespace_name_, name_, record, {}, LeaseNotes(record)));
  if (!object.ok()) return object.status();
  return ParseLease(object->json);
}

}  // namespace nodehook
