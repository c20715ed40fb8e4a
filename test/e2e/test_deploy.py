"""The deployment manifest is accepted by the real API server, and the config it ships is valid."""

import os
import subprocess
from pathlib import Path

from conftest import REPO, Cluster, _binary

MANIFEST = REPO / "deploy" / "daemonset.yaml"


def shipped_config():
    """The config.json block of the ConfigMap in the manifest (a YAML literal block)."""
    lines = MANIFEST.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "config.json: |") + 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    block = []
    for line in lines[start:]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        block.append(line[indent:])
    return "\n".join(block)


def test_the_daemonset_manifest_is_accepted_by_the_real_api_server(tmp_path):
    cluster = Cluster(tmp_path, extra_apply=[MANIFEST])
    try:
        daemonset = cluster.kube.request("GET", "/apis/apps/v1/namespaces/nodehook/daemonsets/nodehook")
        container = daemonset["spec"]["template"]["spec"]["containers"][0]
        assert container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert [p["containerPort"] for p in container["ports"]] == [8090], "the admin port is not exposed"
        policy = cluster.kube.request("GET", "/apis/networking.k8s.io/v1/namespaces/nodehook/networkpolicies/nodehook")
        assert policy["spec"]["podSelector"]["matchLabels"] == daemonset["spec"]["selector"]["matchLabels"]
        assert policy["spec"]["policyTypes"] == ["Ingress"]
        admitted = [port for rule in policy["spec"]["ingress"] for port in rule["ports"]]
        assert admitted == [{"port": "health", "protocol": "TCP"}], "only the probe/metrics port is admitted"
        assert all(rule.get("from") for rule in policy["spec"]["ingress"]), "every rule names its sources"
    finally:
        cluster.stop()


def test_the_shipped_config_passes_check_config(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(shipped_config())
    # check-config loads the API connection too; outside a pod the in-cluster files are missing,
    # so a kubeconfig stands in for them (it is read, never connected to).
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("clusters:\n- name: c\n  cluster: {server: 'https://10.96.0.1:443'}\n"
                          "contexts:\n- name: c\n  context: {cluster: c}\ncurrent-context: c\n")
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    # The hooks live in the image, not on this machine: check the config as CI would, off the node.
    result = subprocess.run([str(binary), "check-config", "--skip-hook-checks", "--kubeconfig", str(kubeconfig),
                             str(config)],
                            capture_output=True, text=True, env=dict(os.environ, NODE_NAME="node-a"))
    assert result.returncode == 0, result.stderr
