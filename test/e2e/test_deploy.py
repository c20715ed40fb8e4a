"""What users install: the kustomize base and overlays under deploy/, rendered by a real kubectl and
checked by the real API server (server-side dry-run, Pod Security admission), and the rendered
default deploy/daemonset.yaml kept equal to the base."""

import json
import os
import shutil
import subprocess

import pytest
import yaml

from conftest import REPO, _binary
from deploy_tools import (DEPLOY, configmap_of_volume, find, kubectl, kubectl_binary, nodehook_rbac,
                          nodehook_rbac_documents, pod_spec, render, shipped_config)
from kube import ApiError

OVERLAYS = ["restricted", "host", "steward"]


def ensure_namespace(kube, name, labels=None):
    try:
        kube.request("POST", "/api/v1/namespaces",
                     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}})
    except ApiError as e:
        if e.status != 409:
            raise


def test_the_rendered_default_manifest_and_role_are_up_to_date():
    result = subprocess.run([str(DEPLOY / "render.sh"), "--check"], capture_output=True, text=True,
                            env=dict(os.environ, KUBECTL=str(kubectl_binary()),
                                     NODEHOOK_BIN=str(_binary("NODEHOOK_BIN", REPO / "build/agent/app/nodehook"))))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_overlay_is_accepted_by_a_server_side_dry_run(cluster, overlay):
    ensure_namespace(cluster.kube, "nodehook")  # a dry run creates nothing, not even the namespace
    out = kubectl("apply", "-k", str(DEPLOY / "overlays" / overlay), "--server-side", "--dry-run=server",
                  kubeconfig=cluster.kubeconfig)
    assert "daemonset.apps/nodehook serverside-applied (server dry run)" in out


def test_the_default_manifest_is_the_restricted_overlay():
    assert render(DEPLOY / "overlays" / "restricted") == render(DEPLOY / "base")


def test_the_shipped_clusterrole_is_what_nodehook_rbac_derives_from_the_shipped_config(tmp_path):
    for overlay in OVERLAYS:
        objects = render(DEPLOY / "overlays" / overlay)
        derived = nodehook_rbac(shipped_config(objects), tmp_path)
        assert find(objects, "ClusterRole", "nodehook") == derived, overlay


def test_the_steward_overlay_ships_exactly_what_nodehook_rbac_prints_for_its_config(tmp_path):
    objects = render(DEPLOY / "overlays" / "steward")
    config = tmp_path / "config.json"
    config.write_text(shipped_config(objects))
    assert json.loads(config.read_text())["tuning"]["cross_node_writes"] == "steward"
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    printed = [d for d in yaml.safe_load_all(subprocess.run(
        [str(binary), "rbac", "--config", str(config)], capture_output=True, text=True, check=True).stdout) if d]
    kinds = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ValidatingAdmissionPolicy",
             "ValidatingAdmissionPolicyBinding")
    # The agents' roles, their node-bound rules and the steward's rights: each as printed, and nothing more.
    shipped = {(o["kind"], o["metadata"]["name"]) for o in objects if o["kind"] in kinds}
    expected = {(d["kind"], d["metadata"]["name"]) for d in printed}
    expected |= {("ClusterRoleBinding", "nodehook")}  # the base binds the agents' ClusterRole
    # and the overlay each Role printed for the agents (agent-roles.yaml: the ready records' Leases)
    expected |= {("RoleBinding", d["metadata"]["name"]) for d in printed
                 if d["kind"] == "Role" and not d["metadata"]["name"].startswith("nodehook-steward")}
    assert shipped == expected
    for d in printed:
        o = find(objects, d["kind"], d["metadata"]["name"])
        assert {k: v for k, v in o.items() if k != "metadata"} == {k: v for k, v in d.items() if k != "metadata"}, d
    # The steward reads the agents' config, under its own account, and never counts as an agent.
    steward = find(objects, "Deployment", "nodehook-steward")["spec"]["template"]
    assert steward["spec"]["serviceAccountName"] == "nodehook-steward"
    assert "nodehook.io/agent" not in steward["metadata"]["labels"]
    # A rollout's own drain skips it by this label; anyone else's drain takes one replica at a time.
    assert steward["metadata"]["labels"]["nodehook.io/steward"] == "true"
    budget = find(objects, "PodDisruptionBudget", "nodehook-steward")
    assert budget["spec"] == {"maxUnavailable": 1, "selector": {
        "matchLabels": find(objects, "Deployment", "nodehook-steward")["spec"]["selector"]["matchLabels"]}}
    assert [v["configMap"]["name"] for v in steward["spec"]["volumes"]] == \
        [configmap_of_volume(objects, "config")["metadata"]["name"]]
    (container,) = steward["spec"]["containers"]
    assert container["args"][:1] == ["steward"] and container["livenessProbe"] and container["readinessProbe"]


def assert_shipped_role(objects, derived):
    """The base's Role of that name is `derived` in the agent's namespace, bound to its account."""
    name = derived["metadata"]["name"]
    role = find(objects, "Role", name)
    assert role == dict(derived, metadata={**derived["metadata"], "namespace": "nodehook"})
    binding = find(objects, "RoleBinding", name)
    assert binding["metadata"]["namespace"] == "nodehook"
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "nodehook", "namespace": "nodehook"}]


def test_the_shipped_lease_role_is_what_nodehook_rbac_derives_for_a_singleton_resource(tmp_path):
    objects = render(DEPLOY / "base")
    config = json.loads(shipped_config(objects))
    for resource in config["resources"]:
        resource["singleton"] = True
        resource["hooks"].pop("resume", None)
    documents = nodehook_rbac_documents(json.dumps(config), tmp_path)
    assert len(documents) == 2
    assert_shipped_role(objects, documents[1])


def test_the_shipped_agent_pods_role_is_what_nodehook_rbac_derives_in_finalizer_mode(tmp_path):
    objects = render(DEPLOY / "base")
    config = json.loads(shipped_config(objects))
    for resource in config["resources"]:
        resource["finalizer"] = True
    documents = nodehook_rbac_documents(json.dumps(config), tmp_path)
    assert [d["kind"] for d in documents] == ["ClusterRole", "Role"]
    assert_shipped_role(objects, documents[1])
    # The agent finds its pod by the name the downward API gives it.
    env = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
           for e in pod_spec(objects)["containers"][0]["env"]}
    assert env["POD_NAME"] == "metadata.name" and env["POD_NAMESPACE"] == "metadata.namespace"


def test_the_shipped_config_passes_check_config(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(shipped_config(render(DEPLOY / "base")))
    # check-config loads the API connection too; outside a pod the in-cluster files are missing,
    # so a kubeconfig stands in for them (it is read, never connected to).
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("clusters:\n- name: c\n  cluster: {server: 'https://10.96.0.1:443'}\n"
                          "contexts:\n- name: c\n  context: {cluster: c}\ncurrent-context: c\n")
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    # The hooks live in the ConfigMap, not on this machine: check the config as CI would, off the node.
    result = subprocess.run([str(binary), "check-config", "--skip-hook-checks", "--kubeconfig", str(kubeconfig),
                             str(config)], capture_output=True, text=True, env=dict(os.environ, NODE_NAME="node-a"))
    assert result.returncode == 0, result.stderr


def test_only_the_read_only_probe_port_is_exposed_and_admitted_by_the_network_policy():
    objects = render(DEPLOY / "base")
    container = pod_spec(objects)["containers"][0]
    assert [p["containerPort"] for p in container["ports"]] == [8090], "the admin port is not exposed"
    policy = find(objects, "NetworkPolicy")
    assert policy["spec"]["podSelector"]["matchLabels"] == find(objects, "DaemonSet")["spec"]["selector"]["matchLabels"]
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    admitted = [port for rule in policy["spec"]["ingress"] for port in rule["ports"]]
    assert admitted == [{"port": "health", "protocol": "TCP"}], "only the probe/metrics port is admitted"
    assert all(rule.get("from") for rule in policy["spec"]["ingress"]), "every rule names its sources"


def test_a_changed_config_gives_the_daemonset_a_new_configmap_name_so_it_rolls_out(tmp_path):
    copy = tmp_path / "deploy"
    shutil.copytree(DEPLOY, copy, symlinks=True)
    before = render(copy / "base")
    config = copy / "base" / "config.json"
    config.write_text(config.read_text().replace('"workers": 4', '"workers": 2'))
    after = render(copy / "base")

    old, new = configmap_of_volume(before, "config"), configmap_of_volume(after, "config")
    assert old["metadata"]["name"].startswith("nodehook-config-")
    assert new["metadata"]["name"] != old["metadata"]["name"]
    assert '"workers": 2' in new["data"]["config.json"]
    # Hooks unchanged: their ConfigMap keeps its name.
    assert configmap_of_volume(after, "hooks")["metadata"]["name"] == configmap_of_volume(before, "hooks")["metadata"]["name"]


def test_the_config_is_mounted_as_a_directory_not_a_subpath():
    mounts = pod_spec(render(DEPLOY / "base"))["containers"][0]["volumeMounts"]
    config = next(m for m in mounts if m["name"] == "config")
    assert "subPath" not in config and config["mountPath"] == "/etc/nodehook/config"


def test_hook_scratch_files_go_to_a_size_limited_memory_volume_where_the_agent_looks_by_default():
    spec = pod_spec(render(DEPLOY / "base"))
    mounts = spec["containers"][0]["volumeMounts"]
    shm = next(m for m in mounts if m["mountPath"] == "/dev/shm")
    volume = next(v for v in spec["volumes"] if v["name"] == shm["name"])
    assert volume["emptyDir"]["medium"] == "Memory"
    assert volume["emptyDir"]["sizeLimit"]


def test_the_update_strategy_stops_the_old_agent_before_the_new_one_starts():
    # The state lock lets one agent per node act: a surge pod would wait unready forever.
    strategy = find(render(DEPLOY / "base"), "DaemonSet")["spec"]["updateStrategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"]["maxSurge"] == 0


def test_the_agent_is_node_critical_linux_only_and_its_resources_are_stated():
    spec = pod_spec(render(DEPLOY / "base"))
    assert spec["priorityClassName"] == "system-node-critical"
    assert spec["nodeSelector"] == {"kubernetes.io/os": "linux"}
    resources = spec["containers"][0]["resources"]
    assert resources["requests"]["memory"] and resources["limits"]["memory"]


def restricted_violations(cluster, spec, name):
    """What Pod Security "restricted" admission of the real API server says about a pod `spec`
    ("" when it admits it)."""
    ensure_namespace(cluster.kube, "pss-restricted", {"pod-security.kubernetes.io/enforce": "restricted"})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    try:
        cluster.kube.request("POST", "/api/v1/namespaces/pss-restricted/pods?dryRun=All", pod)
        return ""
    except ApiError as e:
        assert e.status == 403, str(e)
        return json.loads(e.body)["message"]


def test_the_restricted_agent_container_meets_pod_security_restricted_apart_from_hostpath(cluster):
    spec = pod_spec(render(DEPLOY / "overlays" / "restricted"))
    init = spec.pop("initContainers")
    message = restricted_violations(cluster, spec, "agent-only")
    assert 'violates PodSecurity "restricted' in message
    # The one complaint is the hostPath volumes.
    assert 'restricted volume types (volumes "state", "widgets" use restricted volume type "hostPath")' in message
    for other in ("allowPrivilegeEscalation", "capabilities", "runAsNonRoot", "seccompProfile", "host namespaces"):
        assert other not in message, message
    # Without them, the agent container is admitted as it is.
    spec["volumes"] = [v for v in spec["volumes"] if "hostPath" not in v]
    spec["containers"][0]["volumeMounts"] = [m for m in spec["containers"][0]["volumeMounts"]
                                             if m["name"] not in ("state", "widgets")]
    assert restricted_violations(cluster, spec, "agent-no-hostpath") == ""
    # The init container that hands the hostPath directories to the agent's user is the one root step.
    assert len(init) == 1
    ctx = init[0]["securityContext"]
    assert ctx["runAsUser"] == 0 and ctx["allowPrivilegeEscalation"] is False
    assert ctx["capabilities"] == {"drop": ["ALL"], "add": ["CHOWN", "FOWNER"]}


def test_the_host_overlay_shares_the_host_pid_namespace_privileged_and_runs_the_host_hook():
    objects = render(DEPLOY / "overlays" / "host")
    spec = pod_spec(objects)
    assert spec["hostPID"] is True
    container = spec["containers"][0]
    assert container["securityContext"]["privileged"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    hook = configmap_of_volume(objects, "hooks")["data"]["widget-hook"]
    assert "nsenter -t" in hook and "-m -u -i -n -p" in hook
