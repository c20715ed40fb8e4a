"""The Helm chart (deploy/helm/nodehook) against the kustomize overlays: one source of truth.
`helm lint` passes; `helm template` with the default values renders what `kubectl kustomize
deploy/overlays/restricted` renders, and with mode=host what deploy/overlays/host renders, apart
from labels and names (kustomize's hashed ConfigMap names and helm's checksum annotation are two
ways to roll the DaemonSet out on a config change; the Namespace is helm's --create-namespace).
helm is built from its Go module like kubectl (test/cluster/build.sh helm)."""

import copy
import json
import re
import os
import subprocess

import yaml

from conftest import REPO, _binary
from kube import create_node
from deploy_tools import grant, grant_in_namespace, kubectl, nodehook_rbac_documents, render, revoke
from test_deploy import ensure_namespace
from test_rbac import kubeconfig_with_token

CHART = REPO / "deploy" / "helm" / "nodehook"


def helm(*args, check=True, timeout=120):
    binary = _binary("NODEHOOK_HELM", REPO / "build" / "cache" / "helm")
    env = dict(os.environ, HELM_CACHE_HOME="/tmp/nodehook-helm-cache", HELM_CONFIG_HOME="/tmp/nodehook-helm-config",
               HELM_DATA_HOME="/tmp/nodehook-helm-data")
    result = subprocess.run([str(binary), *args], capture_output=True, text=True, env=env, timeout=timeout)
    if check:
        assert result.returncode == 0, f"helm {' '.join(args)}: {result.stderr}"
    return result


def template(*args):
    out = helm("template", "nodehook", str(CHART), "--namespace", "nodehook", *args).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def is_helm_hook(obj):
    return "helm.sh/hook" in obj["metadata"].get("annotations", {})


def normalized(obj):
    """`obj` with its labels and names (and the references to names) replaced by placeholders."""
    o = copy.deepcopy(obj)
    meta = o["metadata"]
    meta.pop("labels", None)
    meta["name"] = "<name>"
    kind = o["kind"]
    if kind == "ConfigMap":
        o["data"] = {k: json.loads(v) if k.endswith(".json") else v for k, v in o["data"].items()}
    if kind.startswith("ValidatingAdmissionPolicy"):
        meta.pop("namespace", None)  # cluster-scoped: kustomize sets one, which the API server ignores
    if kind == "ValidatingAdmissionPolicyBinding":
        o["spec"]["policyName"] = "<name>"
    if kind == "ValidatingAdmissionPolicy":
        # The agents' account: nodehook:nodehook in both (namespace nodehook), by another name in the chart.
        for c in o["spec"]["matchConditions"]:
            c["expression"] = re.sub(r"system:serviceaccount:[^:']+:[^:']+", "<account>", c["expression"])
    if kind in ("ClusterRoleBinding", "RoleBinding"):
        o["roleRef"]["name"] = "<name>"
        for s in o["subjects"]:
            s["name"] = "<name>"
    if kind == "DaemonSet":
        o["spec"]["selector"]["matchLabels"] = "<labels>"
        template = o["spec"]["template"]
        template["metadata"].pop("labels")
        annotations = {k: v for k, v in template["metadata"].pop("annotations", {}).items()
                       if not k.startswith("checksum/")}
        if annotations:
            template["metadata"]["annotations"] = annotations
        spec = template["spec"]
        spec["serviceAccountName"] = "<name>"
        for v in spec["volumes"]:
            if "configMap" in v:
                v["configMap"]["name"] = "<name>"
        for c in spec["containers"] + spec.get("initContainers", []):
            c.pop("imagePullPolicy", None)  # kubernetes' default for a tagged image
    if kind == "Deployment":  # the steward
        o["spec"]["selector"]["matchLabels"] = "<labels>"
        template = o["spec"]["template"]
        template["metadata"].pop("labels")
        template["metadata"].pop("annotations", None)  # the chart's checksum/config
        spec = template["spec"]
        spec["serviceAccountName"] = "<name>"
        for c in spec.get("topologySpreadConstraints", []):
            c["labelSelector"]["matchLabels"] = "<labels>"
        for v in spec["volumes"]:
            if "configMap" in v:
                v["configMap"]["name"] = "<name>"
    if kind == "NetworkPolicy":
        o["spec"]["podSelector"]["matchLabels"] = "<labels>"
    if kind == "PodDisruptionBudget":  # the steward's
        o["spec"]["selector"]["matchLabels"] = "<labels>"
    return o


def keyed(objects):
    """{(kind, what tells same-kind objects apart): normalized object}."""
    out = {}
    for obj in objects:
        extra = ",".join(sorted(obj.get("data", {}))) if obj["kind"] == "ConfigMap" else ""
        if obj["kind"].startswith("ValidatingAdmissionPolicy"):
            extra = obj["metadata"]["name"].rsplit("-node-bound-", 1)[-1]
        if obj["kind"] in ("Role", "RoleBinding"):
            # Several roles (the Lease, the agent pods): told apart by their name's last word,
            # which the chart and the overlays share ("-lease", "-agent-pods").
            name = obj["metadata"]["name"]
            extra = name[name.rindex("-") + 1:] if "-" in name else name
        if "steward" in obj["metadata"]["name"]:  # the steward's objects beside the agents' of one kind
            extra = "steward-" + extra
        key = (obj["kind"], extra)
        assert key not in out, f"two objects {key}"
        out[key] = normalized(obj)
    return out


def differences(kustomized, charted):
    k = keyed(o for o in kustomized if o["kind"] != "Namespace")
    h = keyed(o for o in charted if not is_helm_hook(o))
    diffs = [f"only in kustomize: {key}" for key in k.keys() - h.keys()]
    diffs += [f"only in the chart: {key}" for key in h.keys() - k.keys()]
    for key in sorted(k.keys() & h.keys()):
        if k[key] != h[key]:
            diffs.append(f"{key}:\n  kustomize: {json.dumps(k[key], sort_keys=True)}\n"
                         f"  chart:     {json.dumps(h[key], sort_keys=True)}")
    return diffs


def test_helm_lint_passes():
    linted = helm("lint", str(CHART), "--strict")
    assert "0 chart(s) failed" in linted.stdout


def test_the_default_chart_renders_the_restricted_overlay_apart_from_labels_and_names():
    kustomized, charted = render(REPO / "deploy" / "overlays" / "restricted"), template()
    assert len([o for o in charted if not is_helm_hook(o)]) == len(kustomized) - 1  # all but the Namespace
    assert differences(kustomized, charted) == []


def test_host_mode_renders_the_host_overlay_apart_from_labels_and_names():
    assert differences(render(REPO / "deploy" / "overlays" / "host"), template("--set", "mode=host")) == []


def test_the_comparison_notices_a_difference():
    charted = template("--set", "resources.limits.memory=512Mi", "--set", "config.tuning.workers=8")
    diffs = differences(render(REPO / "deploy" / "overlays" / "restricted"), charted)
    assert len(diffs) == 2 and "512Mi" in "".join(diffs) and '"workers": 8' in "".join(diffs)


def steward_values(tmp_path):
    """Values that make the chart what deploy/overlays/steward is: its config, and rbac.generated
    the whole output of `nodehook rbac` for it."""
    config = json.loads((REPO / "deploy" / "overlays" / "steward" / "config.json").read_text())
    (tmp_path / "steward-config.json").write_text(json.dumps(config))
    generated = subprocess.run(
        [str(_binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")), "rbac", "--config",
         str(tmp_path / "steward-config.json")], capture_output=True, text=True, check=True).stdout
    values = tmp_path / "steward-values.yaml"
    values.write_text(yaml.safe_dump({"config": config, "rbac": {"generated": generated}}))
    return values


def test_a_steward_config_renders_the_steward_overlay_apart_from_labels_and_names(tmp_path):
    kustomized, charted = render(REPO / "deploy" / "overlays" / "steward"), template("-f", str(steward_values(tmp_path)))
    assert differences(kustomized, charted) == []
    steward = next(o for o in charted if o["kind"] == "Deployment")
    pod = steward["spec"]["template"]
    assert "nodehook.io/agent" not in pod["metadata"]["labels"]
    # Labels are not compared above: what a rollout's drain skips, and the budget over the replicas.
    kustomized_pod = next(o for o in kustomized if o["kind"] == "Deployment")["spec"]["template"]
    assert pod["metadata"]["labels"]["nodehook.io/steward"] == kustomized_pod["metadata"]["labels"]["nodehook.io/steward"]
    budget = next(o for o in charted if o["kind"] == "PodDisruptionBudget")
    assert budget["spec"]["selector"]["matchLabels"] == steward["spec"]["selector"]["matchLabels"]
    assert pod["spec"]["serviceAccountName"].endswith("-steward")
    # Its rights are the steward's alone; the agents' ClusterRole has none of them.
    roles = {o["metadata"]["name"]: o["rules"] for o in charted if o["kind"] == "ClusterRole" and not is_helm_hook(o)}
    assert roles["nodehook"] != roles["nodehook-steward"]
    # The agents read only their own Node (list and watch by name: the labels and owner of their ready
    # record); judging which nodes departed, which needs get on every Node, is the steward's.
    assert [r["verbs"] for r in roles["nodehook"] if "nodes" in r["resources"]] == [["list", "watch"]]


def test_a_steward_without_its_config_or_its_rights_is_refused_saying_which(tmp_path):
    refused = helm("template", "nodehook", str(CHART), "--set", "steward.enabled=true", check=False)
    assert refused.returncode != 0 and "steward.enabled: set config.tuning.cross_node_writes to" in refused.stderr, \
        refused.stderr
    refused = helm("template", "nodehook", str(CHART), "--set", "config.tuning.cross_node_writes=steward", check=False)
    assert refused.returncode != 0 and "rbac.generated holds no steward roles" in refused.stderr, refused.stderr
    # With an existingConfigMap the chart cannot read the config: steward.enabled says it.
    values = yaml.safe_load(steward_values(tmp_path).read_text())
    rendered = template("--set", "existingConfigMap=mine", "--set", "steward.enabled=true",
                        "--set-file", f"rbac.generated={write(tmp_path / 'rbac.yaml', values['rbac']['generated'])}")
    steward = next(o for o in rendered if o["kind"] == "Deployment")
    assert steward["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] == "mine"


def write(path, text):
    path.write_text(text)
    return path


def daemonset_checksum(objects):
    ds = next(o for o in objects if o["kind"] == "DaemonSet")
    return ds["spec"]["template"]["metadata"]["annotations"]["checksum/config"]


def test_a_config_or_hook_change_rolls_the_daemonset_out():
    default = daemonset_checksum(template())
    assert default == daemonset_checksum(template())
    assert daemonset_checksum(template("--set", "config.tuning.workers=8")) != default
    assert daemonset_checksum(template("--set", "hooks.files.widget-hook=#!/bin/sh")) != default


def test_rbac_is_what_nodehook_rbac_prints_for_the_config(tmp_path):
    config = next(o for o in template() if o["kind"] == "ConfigMap" and "config.json" in o["data"])
    (role,) = [d for d in nodehook_rbac_documents(config["data"]["config.json"], tmp_path) if d["kind"] == "ClusterRole"]
    charted = next(o for o in template() if o["kind"] == "ClusterRole" and not is_helm_hook(o))
    assert charted["rules"] == role["rules"]
    # A config with a singleton resource: --set-file rbac.generated=<(nodehook rbac ...).
    singleton = (REPO / "config" / "examples" / "singleton.json").read_text()
    documents = nodehook_rbac_documents(singleton, tmp_path)
    generated = tmp_path / "rbac.yaml"
    generated.write_text(subprocess.run(
        [str(_binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")), "rbac", "--config",
         str(tmp_path / "rbac-config.json")], capture_output=True, text=True, check=True).stdout)
    rendered = template("--set-file", f"rbac.generated={generated}")
    assert charted_roles(rendered) == printed_roles(documents)


def test_a_rollout_config_gets_the_rollout_lease_role_and_its_binding(tmp_path):
    rollout = (REPO / "config" / "examples" / "rollout.json").read_text()
    documents = nodehook_rbac_documents(rollout, tmp_path)
    assert ("Role", "rollout") in printed_roles(documents)
    generated = tmp_path / "rbac.yaml"
    generated.write_text("\n---\n".join(yaml.safe_dump(d) for d in documents))
    rendered = template("--set-file", f"rbac.generated={generated}")
    assert charted_roles(rendered) == printed_roles(documents)
    (binding,) = [o for o in rendered if o["kind"] == "RoleBinding" and o["metadata"]["name"].endswith("-rollout")]
    assert binding["roleRef"]["name"] == binding["metadata"]["name"]
    assert binding["subjects"][0]["name"] == next(o for o in rendered if o["kind"] == "ServiceAccount")["metadata"]["name"]


def test_a_config_whose_hooks_publish_node_outputs_gets_the_own_pod_role(tmp_path):
    # The agents read their own pod's tolerations: a hook's NoExecute taint they do not tolerate is refused.
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    values["config"]["resources"][0]["node_outputs"] = {"prefixes": ["widgets.example.com/"]}
    documents = nodehook_rbac_documents(json.dumps(values["config"]), tmp_path)
    assert printed_roles(documents)[("Role", "own-pod")] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    generated = tmp_path / "rbac.yaml"
    generated.write_text("\n---\n".join(yaml.safe_dump(d) for d in documents))
    rendered = template("--set-file", f"rbac.generated={generated}")
    assert charted_roles(rendered) == printed_roles(documents)


def charted_roles(rendered):
    """(kind, what the name says after the release name) -> rules, of the chart's agent roles."""
    return {(o["kind"], o["metadata"]["name"].split("nodehook-", 1)[-1] if o["kind"] == "Role" else ""): o["rules"]
            for o in rendered if o["kind"] in ("ClusterRole", "Role") and not is_helm_hook(o)}


def printed_roles(documents):
    return {(d["kind"], d["metadata"]["name"].split("nodehook-", 1)[-1] if d["kind"] == "Role" else ""): d["rules"]
            for d in documents}


def test_uninstall_runs_release_finalizers_as_a_pre_delete_hook():
    hooks = [o for o in template() if is_helm_hook(o)]
    assert {o["metadata"]["annotations"]["helm.sh/hook"] for o in hooks} == {"pre-delete"}
    (job,) = [o for o in hooks if o["kind"] == "Job"]
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][:2] == ["fleet", "release-finalizers"] and "--yes" in container["args"]
    # It stops the agents first: the DaemonSet deleted, its pods gone (terminationGracePeriodSeconds
    # plus two minutes) before any finalizer is released.
    stop = container["args"].index("--stop-agents")
    assert container["args"][stop + 1] == "nodehook/nodehook"
    assert container["args"][container["args"].index("--stop-timeout-seconds") + 1] == "180"
    (role,) = [o for o in hooks if o["kind"] == "ClusterRole"]
    # Nodes are read to tell an agent pod stuck on a dead node, which is not waited for.
    assert role["rules"] == [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list", "patch"]},
                             {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]
    (local,) = [o for o in hooks if o["kind"] == "Role"]
    assert local["metadata"]["namespace"] == "nodehook"
    assert local["rules"] == [
        {"apiGroups": ["apps"], "resources": ["daemonsets"], "resourceNames": ["nodehook"], "verbs": ["delete"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]
    assert not any(is_helm_hook(o) for o in template("--set", "releaseFinalizersOnUninstall=false"))
    assert "--uncordon-failed" not in container["args"]


def test_the_uninstall_job_may_give_back_nodes_only_when_a_rollout_cordons(tmp_path):
    values = tmp_path / "values.yaml"
    for rollout, cordons in (({"max_nodes": 1}, False), ({"max_nodes": 1, "cordon": True}, True),
                             ({"max_nodes": 1, "drain": {"timeout_seconds": 60}}, True)):
        values.write_text(yaml.safe_dump({"config": {"resources": [
            {"group": "example.com", "version": "v1", "plural": "widgets", "hooks": {"create": {"argv": ["/x"]}},
             "rollout": rollout}]}}))
        hooks = {o["kind"]: o for o in template("-f", str(values)) if is_helm_hook(o)}
        (nodes,) = [r for r in hooks["ClusterRole"]["rules"] if r["resources"] == ["nodes"]]
        assert nodes["verbs"] == (["get", "list", "patch"] if cordons else ["get"]), rollout
    hooks = {o["kind"]: o for o in template("-f", str(values), "--set", "uncordonFailedNodesOnUninstall=true")
             if is_helm_hook(o)}
    assert hooks["Job"]["spec"]["template"]["spec"]["containers"][0]["args"][-1] == "--uncordon-failed"


def test_with_an_existing_configmap_the_uninstall_jobs_rights_follow_the_generated_rbac(tmp_path):
    # The chart cannot read a ConfigMap it does not render: the Job may release what the agents'
    # ClusterRole (rbac.generated, from `nodehook rbac` for the real config) lets them watch.
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")

    def job_rules(resources):
        config, generated = tmp_path / "config.json", tmp_path / "rbac.yaml"
        config.write_text(json.dumps({"state_file": "/s.db", "api": {"in_cluster": True}, "resources": resources}))
        generated.write_text(subprocess.run([str(binary), "rbac", "--config", str(config)], capture_output=True,
                                            text=True, check=True).stdout)
        rendered = template("--set", "existingConfigMap=my-config", "--set-file", f"rbac.generated={generated}")
        (role,) = [o for o in rendered if is_helm_hook(o) and o["kind"] == "ClusterRole"]
        return role["rules"]

    assert job_rules([
        {"group": "example.com", "version": "v1", "plural": "gadgets", "finalizer": True,
         "hooks": {"delete": {"argv": ["/x"]}}},
        {"group": "", "version": "v1", "plural": "configmaps", "hooks": {"create": {"argv": ["/x"]}}}]) == [
        {"apiGroups": ["example.com"], "resources": ["gadgets"], "verbs": ["get", "list", "patch"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "patch"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]
    # A config whose rollout drains: the agents patch their Node, and the Job may give it back.
    assert job_rules([{"group": "example.com", "version": "v1", "plural": "gadgets",
                       "hooks": {"create": {"argv": ["/x"]}}, "rollout": {"max_nodes": 1, "drain": True}}]) == [
        {"apiGroups": ["example.com"], "resources": ["gadgets"], "verbs": ["get", "list", "patch"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]}]


def test_the_optional_monitoring_objects_render_the_shipped_prometheus_rule():
    rendered = template("--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true")
    kinds = {o["kind"] for o in rendered}
    assert {"ServiceMonitor", "PrometheusRule", "Service"} <= kinds
    rule = next(o for o in rendered if o["kind"] == "PrometheusRule")
    shipped = yaml.safe_load((REPO / "deploy" / "prometheusrule.yaml").read_text())
    assert rule["spec"] == shipped["spec"]
    assert "ServiceMonitor" not in {o["kind"] for o in template()}


def test_hooks_from_an_existing_configmap_or_a_host_path():
    cm = template("--set", "hooks.existingConfigMap=my-hooks")
    ds = next(o for o in cm if o["kind"] == "DaemonSet")
    hooks = next(v for v in ds["spec"]["template"]["spec"]["volumes"] if v["name"] == "hooks")
    assert hooks["configMap"]["name"] == "my-hooks"
    assert not any(o["kind"] == "ConfigMap" and "widget-hook" in o.get("data", {}) for o in cm)
    hp = template("--set", "hooks.hostPath=/opt/hooks", "--set", "existingConfigMap=my-config")
    ds = next(o for o in hp if o["kind"] == "DaemonSet")
    volumes = {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}
    assert volumes["hooks"]["hostPath"]["path"] == "/opt/hooks"
    assert volumes["config"]["configMap"]["name"] == "my-config"
    assert not any(o["kind"] == "ConfigMap" for o in hp)


def test_host_network_and_another_health_port_for_a_second_install_on_the_same_nodes():
    rendered = template("--set", "hostNetwork=true", "--set", "healthPort=8190",
                        "--set", "config.tuning.health_address=:8190")
    ds = next(o for o in rendered if o["kind"] == "DaemonSet")["spec"]["template"]["spec"]
    (job,) = [o["spec"]["template"]["spec"] for o in rendered if o["kind"] == "Job"]
    for spec in (ds, job):  # the uninstall Job must reach the API server as the agents do
        assert (spec["hostNetwork"], spec["dnsPolicy"]) == (True, "ClusterFirstWithHostNet")
    assert ds["containers"][0]["ports"] == [{"name": "health", "containerPort": 8190}]
    assert "hostNetwork" not in next(o for o in template() if o["kind"] == "DaemonSet")["spec"]["template"]["spec"]
    # The probes would all fail if the agent listened elsewhere: the chart refuses to render.
    refused = helm("template", "nodehook", str(CHART), "--set", "healthPort=8190", check=False)
    assert refused.returncode != 0
    assert 'healthPort is 8190 but config.tuning.health_address is ":8090"' in refused.stderr, refused.stderr


def test_the_chart_is_accepted_by_a_server_side_dry_run(cluster, tmp_path):
    ensure_namespace(cluster.kube, "nodehook")  # a dry run creates nothing, not even the namespace
    rendered = tmp_path / "chart.yaml"
    rendered.write_text(yaml.safe_dump_all(template()))  # the uninstall Job and its RBAC included
    out = kubectl("apply", "-f", str(rendered), "--server-side", "--dry-run=server", kubeconfig=cluster.kubeconfig)
    assert "daemonset.apps/nodehook serverside-applied (server dry run)" in out
    assert "job.batch/nodehook-release-finalizers serverside-applied (server dry run)" in out


def rollout_id(resource_id):
    """The rollout id of a cluster-wide config entry (RolloutIdOf, rollout_leases.h): the first 10
    hex digits of the FNV-1a 64 hash of its resource id."""
    h = 1469598103934665603
    for c in resource_id.encode():
        h = ((h ^ c) * 1099511628211) % (1 << 64)
    return f"{h:016x}"[:10]


def test_the_uninstall_jobs_rights_are_enough_to_release_every_finalizer_and_cordon(cluster, widgets, tmp_path):
    # The chart's config with a rollout that drains: the Job gives back its cordons too.
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    values["config"]["resources"][0]["rollout"] = {"max_nodes": 1, "drain": True}
    (tmp_path / "values.yaml").write_text(yaml.safe_dump({"config": values["config"]}))
    rendered = template("-f", str(tmp_path / "values.yaml"))
    hooks = {o["kind"]: o for o in rendered if is_helm_hook(o)}
    mark = f"nodehook.io/cordoned-{rollout_id('widgets.example.com/v1')}.0123456789ab"
    node = f"release-{widgets.namespace}"
    create_node(cluster.kube, node, {})
    cluster.kube.request("PATCH", f"/api/v1/nodes/{node}", {
        "metadata": {"annotations": {mark: json.dumps({"object": "shop/w1", "uid": "u", "state": "s1"})}},
        "spec": {"unschedulable": True}}, "application/merge-patch+json")
    name = f"release-{widgets.namespace}"
    token = grant(cluster.kube, widgets.namespace, name, hooks["ClusterRole"])
    # The Role for the agents' namespace, here the widgets' (no controller runs here: the
    # DaemonSet never gets pods, so only its deletion is seen).
    grant_in_namespace(cluster.kube, widgets.namespace, name, hooks["Role"])
    daemonsets = f"/apis/apps/v1/namespaces/{widgets.namespace}/daemonsets"
    labels = {"app.kubernetes.io/name": "nodehook"}
    cluster.kube.request("POST", daemonsets, {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nodehook"},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [{"name": "nodehook", "image": "nodehook:test"}]}}}})
    try:
        widgets.create("w1", {"size": 1})
        widgets.set_finalizers("w1", ["nodehook.io/node-a", "nodehook.io/node-b"])
        job = hooks["Job"]["spec"]["template"]["spec"]["containers"][0]
        config = next(o for o in rendered if o["kind"] == "ConfigMap" and "config.json" in o["data"])
        (tmp_path / "config.json").write_text(config["data"]["config.json"])
        args = [a.replace("/etc/nodehook/config/config.json", str(tmp_path / "config.json"))
                .replace("nodehook/nodehook", f"{widgets.namespace}/nodehook") for a in job["args"]]
        kubeconfig = kubeconfig_with_token(cluster.kubeconfig, token, tmp_path / "job-kubeconfig")
        binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
        done = subprocess.run([str(binary), *args, "--kubeconfig", str(kubeconfig)], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        assert widgets.get("w1")["metadata"].get("finalizers", []) == []
        assert cluster.kube.request("GET", daemonsets)["items"] == [], "the agents' DaemonSet was not deleted"
        given = cluster.kube.request("GET", f"/api/v1/nodes/{node}")
        assert not given["spec"].get("unschedulable") and mark not in given["metadata"].get("annotations", {}), given
        assert f"{node}: uncordoned (shop/w1, state s1)" in done.stdout, done.stdout
    finally:
        revoke(cluster.kube, name)
        cluster.kube.request("DELETE", f"/api/v1/nodes/{node}")


def test_each_release_elects_its_singleton_leader_with_a_lease_of_its_own(tmp_path):
    """Two releases in one namespace must not share the singleton Lease: one leader between them
    would leave the other release's singleton resources without one."""
    def lease_of(release, *args):
        out = helm("template", release, str(CHART), "--namespace", "nodehook", *args).stdout
        rendered = [doc for doc in yaml.safe_load_all(out) if doc]
        config = json.loads(next(o for o in rendered if o["kind"] == "ConfigMap"
                                 and "config.json" in o["data"])["data"]["config.json"])
        roles = [o for o in rendered if o["kind"] == "Role" and o["metadata"]["name"].endswith("-lease")]
        return config, roles

    # A singleton config, and the Lease Role `nodehook rbac` prints for it (rbac.generated).
    singleton = json.loads((REPO / "config" / "examples" / "singleton.json").read_text())
    singleton["tuning"].pop("lease_name", None)
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"config": singleton}))
    generated = tmp_path / "rbac.yaml"
    generated.write_text("\n---\n".join(yaml.safe_dump(d) for d in
                                        nodehook_rbac_documents(json.dumps(singleton), tmp_path)))
    args = ("-f", str(values), "--set-file", f"rbac.generated={generated}")

    # The release "nodehook" keeps the agent's default name: its config is rendered unchanged.
    config, (role,) = lease_of("nodehook", *args)
    assert "lease_name" not in config.get("tuning", {})
    assert role["rules"][1]["resourceNames"] == ["nodehook-singleton"]
    # Another release gets its own Lease, written into its config and named in its Role, with the
    # rules `nodehook rbac` prints for that config.
    config, (role,) = lease_of("second", *args)
    assert config["tuning"]["lease_name"] == "second-nodehook-singleton"
    printed = [d for d in nodehook_rbac_documents(json.dumps(config), tmp_path)
               if d["kind"] == "Role" and d["metadata"]["name"].endswith("-lease")]
    assert [role["rules"]] == [d["rules"] for d in printed]
    # A name chosen in the config is kept.
    config, (role,) = lease_of("second", *args, "--set", "config.tuning.lease_name=team-a-leader")
    assert config["tuning"]["lease_name"] == "team-a-leader"
    assert role["rules"][1]["resourceNames"] == ["team-a-leader"]
