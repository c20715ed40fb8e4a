#include "agent/kubectl/finalizer_release.h"

#include "agent/finalizers/finalizer_sweep.h"
#include "agent/finalizers/finalizers.h"

namespace nodehook {
namespace {

std::string Describe(const ResourceRef& r) { return r.Id() + (r.namespace_name.empty() ? "" : " in " + r.namespace_name); }

}  // namespace

ReleaseTotals ReleaseFinalizers(KubeClient& client, const std::vector<ResourceRef>& resources, std::ostream& out,
                                std::ostream& err) {
  ReleaseTotals totals;
  for (const ResourceRef& resource : resources) {
    SweepReport report;
    report.released = [&](const ObjectMeta& object, int removed) {
      out << "released " << removed << " finalizer" << (removed == 1 ? "" : "s") << " from " << resource.Id() << " "
          << object.Key() << "\n";
    };
    report.failed = [&](const ObjectMeta& object, const std::string& what, const std::string& why) {
      err << "cannot " << what << " " << resource.Id() << " " << object.Key() << ": " << why << "\n";
    };
    auto every_nodehook = [](const ObjectMeta&, const std::string& finalizer) { return IsNodehookFinalizer(finalizer); };
    Result<SweepCounts> counts = SweepFinalizers(client, resource, every_nodehook, report);
    if (!counts.ok()) {
      err << "cannot list " << Describe(resource) << ": " << counts.status().message() << "\n";
      ++totals.failures;
      continue;
    }
    totals.objects += counts->objects;
    totals.released_objects += counts->released_objects;
    totals.finalizers += counts->finalizers;
    totals.failures += counts->failures;
  }
  return totals;
}

}  // namespace nodehook
