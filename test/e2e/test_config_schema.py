"""`nodehook config-schema` and `nodehook check-config --offline`: every shipped config validates
against the schema and passes the offline check, and both refuse what the parser refuses. No API
server is needed: these are the checks a CI pipeline runs before a config ships."""

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import REPO, _binary

# Every config the project ships: the examples, the kustomize base and the Helm chart's default.
SHIPPED = sorted([REPO / "config" / "example.json", *(REPO / "config" / "examples").glob("*.json"),
                  *(REPO / "deploy").rglob("*.json")])
SHIPPED = [p for p in SHIPPED if "grafana" not in p.parts]


def nodehook(*args, env=None):
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    # No NODE_NAME, no KUBECONFIG, no service account: the machine a CI job runs on.
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=30,
                          env=env if env is not None else {"PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def validator():
    printed = nodehook("config-schema")
    assert printed.returncode == 0, printed.stderr
    schema = json.loads(printed.stdout)
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def test_the_helm_charts_default_config_matches_the_schema_and_passes_the_offline_check(validator, tmp_path):
    values = yaml.safe_load((REPO / "deploy" / "helm" / "nodehook" / "values.yaml").read_text())
    assert list(validator.iter_errors(values["config"])) == []
    path = tmp_path / "chart-config.json"
    path.write_text(json.dumps(values["config"]))
    checked = nodehook("check-config", "--offline", str(path))
    assert checked.returncode == 0, checked.stderr


def test_the_project_ships_configs_in_config_and_deploy():
    names = {p.relative_to(REPO).as_posix() for p in SHIPPED}
    assert {"config/example.json", "deploy/base/config.json"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_shipped_config_matches_the_schema(validator, path):
    errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(json.loads(path.read_text()))]
    assert errors == []


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_shipped_config_passes_check_config_offline(path):
    checked = nodehook("check-config", "--offline", str(path))
    assert checked.returncode == 0, checked.stderr
    assert "not checked (--offline): the hook programs and the API credentials" in checked.stdout


def minimal(**resource):
    return {"state_file": "/s.db", "resources": [{"version": "v1", "plural": "w",
                                                  "hooks": {"create": {"argv": ["/h"]}}, **resource}]}


@pytest.mark.parametrize("config", [
    {**minimal(), "tuning": {"workers": 0}},                                  # below the range
    {**minimal(), "tuning": {"log_format": "xml"}},                           # not one of the choices
    {**minimal(), "tuning": {"no_such_knob": 1}},                             # unknown key
    minimal(hooks={"create": {"argv": ["relative/hook"]}}),                   # argv[0] not absolute
    minimal(hooks={"check": {"argv": ["/h"]}}),                               # check without interval
    minimal(hooks={}),                                                        # no hook at all
    minimal(singleton=True, finalizer=True),                                  # singleton and per-node
    minimal(ignored_paths=["metadata..x"]),                                   # not a dotted path
    {"state_file": "/s.db", "api": {"in_cluster": True, "kubeconfig": "/k"}, "resources": minimal()["resources"]},
    minimal(rollout={"max_nodes": 0}),                                        # no node at a time
    minimal(rollout={"max_nodes": "101%"}),                                   # not a percentage
    minimal(rollout={"windows": [{"cron": "0 22 * * *", "duration_seconds": 5}]}),  # window too short
    minimal(rollout={"windows": [{"duration_seconds": 60}]}),                 # window without cron
    minimal(rollout={"reasons": ["event"]}),                                  # not a gated reason
    minimal(rollout={"hold_label": "hold me"}),                               # not a label key
    minimal(rollout={"slot_lease": 15}),                                      # unknown key
    minimal(singleton=True, rollout={}),                                      # singleton and rollout
    minimal(rollout={"drain": {"timeout_seconds": 0}}),                       # drain timeout out of range
    minimal(rollout={"drain": {"wait": 1}}),                                  # unknown drain key
    minimal(rollout={"reboot": {"timeout_seconds": 60}}),                     # reboot without argv
    minimal(rollout={"reboot": {"argv": ["reboot"]}}),                        # reboot argv not absolute
    minimal(rollout={"cordon": True, "on_failure": "retry"}),                 # not an on_failure choice
], ids=["range", "enum", "unknown-knob", "relative-argv", "check-interval", "no-hooks", "singleton-finalizer",
        "dotted-path", "api-both", "rollout-max-nodes", "rollout-percent", "rollout-window-duration",
        "rollout-window-cron", "rollout-reason", "rollout-hold-label", "rollout-unknown-key", "singleton-rollout",
        "drain-timeout", "drain-unknown-key", "reboot-argv", "reboot-relative", "on-failure"])
def test_the_schema_and_the_offline_check_both_refuse_what_the_parser_refuses(validator, tmp_path, config):
    assert list(validator.iter_errors(config)) != []
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(config))
    checked = nodehook("check-config", "--offline", str(path))
    assert checked.returncode == 2 and str(path) in checked.stderr


def test_a_full_rollout_block_matches_the_schema_and_passes_the_offline_check(validator, tmp_path):
    config = minimal(hooks={"create": {"argv": ["/h"]}, "update": {"argv": ["/h"]}}, rollout={
        "max_nodes": "10%", "canary_nodes": 1, "soak_seconds": 60,
        "verify": {"argv": ["/hooks/verify"], "timeout_seconds": 120},
        "max_failed_nodes": 2, "failure_after_retries": 3, "reasons": ["create", "update"],
        "windows": [{"cron": "0 22 * * 1-5", "duration_seconds": 14400, "time_zone": "Europe/Berlin"}],
        "hold_label": "nodehook.io/rollout-hold", "slot_lease_seconds": 15,
        "drain": {"timeout_seconds": 300, "pod_selector": "app!=agent", "grace_period_seconds": 30},
        "reboot": {"argv": ["/usr/bin/nsenter", "-t", "1", "--", "reboot"], "timeout_seconds": 600},
        "on_failure": "uncordon"})
    assert list(validator.iter_errors(config)) == []
    path = tmp_path / "rollout.json"
    path.write_text(json.dumps(config))
    checked = nodehook("check-config", "--offline", str(path))
    assert checked.returncode == 0, checked.stderr
    assert "rollout: max_nodes 10%, canary_nodes 1" in checked.stdout
    assert "node steps: cordon, drain (timeout 300s, pods app!=agent, grace 30s), hook, reboot when asked" in checked.stdout


def test_check_config_on_the_node_names_the_offline_mode_when_only_the_machine_is_missing():
    checked = nodehook("check-config", str(REPO / "config" / "example.json"))
    assert checked.returncode == 2
    assert f"nodehook check-config --offline {REPO / 'config' / 'example.json'}" in checked.stderr
