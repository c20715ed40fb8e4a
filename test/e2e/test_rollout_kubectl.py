"""`kubectl nodehook wait` for a resource without a rollout policy, as a pipeline drives it: apply
a change, then wait until every agent has handled it. Two agents against the real API server,
asked through its pod proxy as in test_fleet.py (a network namespace for the pod addresses; needs
root). The agents answer from their /v1/objects snapshots, whose settled_resource_version must
reach the object's resourceVersion.
"""

import re

from test_fleet import agent_pods, kubectl_nodehook, pod_network, pytestmark, start_two_agents  # noqa: F401 (fixtures)


def test_wait_exits_0_once_both_agents_handled_the_change_and_4_naming_the_node_that_fails(
        make_agent, widgets, pod_network, agent_pods, kubectl_nodehook):  # noqa: F811
    # node-b's create of w2 fails, and its next attempt is far away: it keeps blocking.
    node_a, node_b = start_two_agents(make_agent, pod_network, agent_pods)
    ns = widgets.namespace

    # The pipeline: apply, then wait; no waiting for the agents on the test's side.
    widgets.create("w1", {"size": 1})
    code, out, err = kubectl_nodehook("wait", "widgets.example.com/w1", "-n", ns, "--timeout", "60s")
    print(out, err)
    assert code == 0, out + err
    assert re.match(r"every node \(2\) handled resourceVersion \d+\n", out), out
    assert len(node_a.records("w1", "create")) == 1 and len(node_b.records("w1", "create")) == 1

    # A change of the spec: a new resourceVersion that both must settle at.
    widgets.patch_spec("w1", {"size": 2})
    code, out, err = kubectl_nodehook("wait", "widgets/w1", "-n", ns, "--timeout", "60s")
    assert code == 0, out + err
    assert node_a.records("w1", "update") and node_b.records("w1", "update")

    widgets.create("w2", {"size": 1})
    node_b.wait_for("w2", "create", result="failed")
    code, out, err = kubectl_nodehook("wait", "widgets.example.com/w2", "-n", ns, "--timeout", "6s")
    print(out, err)
    assert code == 4, out + err
    assert out.startswith("timed out after 6s: 1 of 2 nodes have not handled resourceVersion"), out
    assert re.search(r"^  node-b: create:failed\(1\): .*failing on purpose", out, re.M), out
    assert "node-a" not in out

    # Read-only commands on a resource without a policy: exit 1, saying so.
    code, out, err = kubectl_nodehook("rollout", "status", "widgets.example.com/w1", "-n", ns)
    assert code == 1 and "has no rollout policy" in err, out + err
