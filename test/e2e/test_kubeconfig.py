"""Kubeconfigs as kubectl writes and merges them, against the real API server: a KUBECONFIG list
whose user is an exec credential plugin, and `check-config` loading the kubeconfig it names."""

import base64
import json
import os
import subprocess

from conftest import REPO, _binary

CHECK_CONFIG_BASE = {
    "node_name": "node-a",
    "state_file": "/tmp/unused-state.db",
    "resources": [{"group": "example.com", "version": "v1", "plural": "widgets",
                   "hooks": {"create": {"argv": ["/bin/true"]}}}],
}


def _nodehook():
    return _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")


def _write_plugin(directory, token):
    """An exec plugin that prints an ExecCredential (v1) with `token` and counts its runs."""
    plugin = directory / "fake-cloud-auth"
    plugin.write_text(f"""#!/bin/sh
echo run >> {directory}/plugin-runs
printf '%s' '{{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1",\
"status":{{"token":"{token}"}}}}'
""")
    plugin.chmod(0o755)
    return plugin


def test_an_agent_authenticates_through_an_exec_plugin_in_a_merged_kubeconfig_list(cluster, widgets, make_agent,
                                                                                   tmp_path):
    # As `kubectl config set-cluster/set-context` and `set-credentials --exec-*` write them, split
    # over two files the way KUBECONFIG=a:b merges them.
    ca_data = base64.b64encode(open(cluster.kube._ca_file.name, "rb").read()).decode()
    clusters = tmp_path / "clusters.yaml"
    clusters.write_text(f"""apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {ca_data}
    server: {cluster.kube.server}
  name: e2e
contexts:
- context:
    cluster: e2e
    user: cloud
  name: e2e
current-context: e2e
kind: Config
preferences: {{}}
users: null
""")
    plugin = _write_plugin(tmp_path, cluster.kube.token)
    users = tmp_path / "users.yaml"
    users.write_text(f"""apiVersion: v1
clusters: null
contexts: null
current-context: ""
kind: Config
preferences: {{}}
users:
- name: cloud
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      args: null
      command: {plugin}
      env: null
      interactiveMode: Never
      provideClusterInfo: true
""")
    agent = make_agent("node-a", env={"KUBECONFIG": f"{clusters}:{users}"}).start()
    widgets.create("w1", {"size": 1})
    agent.wait_for("w1", "create")
    assert (tmp_path / "plugin-runs").read_text().count("run") >= 1
    assert not agent.log_events("API server rejected our credentials")


def _check_config(tmp_path, api, env=None):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**CHECK_CONFIG_BASE, "api": api}))
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_") and k != "KUBECONFIG"}
    return subprocess.run([str(_nodehook()), "check-config", str(config)], capture_output=True, text=True,
                          env={**clean_env, **(env or {})})


def test_check_config_loads_the_kubeconfig_and_reports_its_errors(cluster, tmp_path):
    assert _check_config(tmp_path, {"kubeconfig": cluster.kubeconfig}).returncode == 0

    broken = tmp_path / "broken-kubeconfig"
    broken.write_text("apiVersion: v1\nclusters:\n- name: x\n  cluster: {server: [}\n")
    result = _check_config(tmp_path, {"kubeconfig": str(broken)})
    assert result.returncode == 2
    assert f"api: kubeconfig {broken}: line 4, column" in result.stderr

    insecure = tmp_path / "insecure-kubeconfig"
    insecure.write_text(open(cluster.kubeconfig).read().replace(
        "    certificate-authority-data:", "    insecure-skip-tls-verify: true\n    certificate-authority-data:"))
    result = _check_config(tmp_path, {"kubeconfig": str(insecure)})
    assert result.returncode == 2
    assert "insecure flag is not allowed" in result.stderr


def test_check_config_loads_the_in_cluster_files(tmp_path):
    result = _check_config(tmp_path, {"in_cluster": True})
    assert result.returncode == 2
    assert "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set" in result.stderr
