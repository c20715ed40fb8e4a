"""A rollout's node steps (issue 28): drains under a PodDisruptionBudget, across an agent's kill
and its DaemonSet's update, and reboots the hook asks for, proven by the node's new boot ID.
Every test but the first ends with back_to_the_overlay (the first uncordons): the next test, and
the next file, find the restricted overlay's own config and hook and every node schedulable."""

import json
import os
import signal
import time

import pytest

from conftest import wait_until
from deploy_tools import kubectl

from .cluster_tools import (NEEDS_ROOT, NODES, WIDGET_NS, agent_on, create_widget, hook_runs, install, pod_log,
                            pods, wait_rolled_out, widget_file)
from .node_step_tools import (REBOOT_ASK, REBOOT_HOOK, CordonWatch, agent_events, back_to_the_overlay,
                              cordon_marks, nodes_that_logged, no_slow_start, parse_time, reboot_node, remove_web,
                              rollout_story, slow_start, steps_config, uncordon_all, unschedulable, web_deployment,
                              web_pods, widget_events)

pytestmark = NEEDS_ROOT


def test_a_drain_moves_a_deployments_pods_one_at_a_time_under_its_budget_and_uncordons(real, tmp_path):
    """Each node in turn: cordoned, its web pods evicted (the budget allows one at a time; the
    scheduler puts each replacement on the other node), the hook run once, uncordoned."""
    install(real, tmp_path, "restricted", config=steps_config(drain={"timeout_seconds": 180}))
    wait_rolled_out(real)
    web_deployment(real, "web", 3, 2)
    try:
        create_widget(real, "drained", 1)
        for i in range(1, NODES + 1):
            wait_until(widget_file(real, f"node-{i}", "drained").exists, f"the hook's file on node-{i}", timeout=240)
        for i in range(1, NODES + 1):
            node = f"node-{i}"
            wait_until(lambda: agent_events(real, node, "rollout node done"), f"{node} done", timeout=120)
            assert not unschedulable(real, node) and not cordon_marks(real, node), node
            drained = agent_events(real, node, "node drained")
            taken = agent_events(real, node, "rollout slot taken")
            assert len(drained) == 1 and taken, (drained, taken)
            slot_to_drained = (parse_time(drained[0]["ts"]) - parse_time(taken[0]["ts"]))
            print(f"{node}: drained in {slot_to_drained:.1f} s after the slot, {drained[0]['evictions']} Eviction calls "
                  f"({len(agent_events(real, node, 'node drain blocked'))} pods refused at least once)")
            assert len(hook_runs(pod_log(real, next(p["metadata"]["name"] for p in pods(real)
                                                    if p["spec"].get("nodeName") == node)), f"{WIDGET_NS}/drained")) == 1
        # The budget held: at least two web pods Ready throughout is the API server's to enforce;
        # here, all three are back and Ready.
        wait_until(lambda: len([p for p in web_pods(real, "web") if p[2] and not p[3]]) == 3, "three web pods Ready")
    finally:
        remove_web(real, "web")
        uncordon_all(real)


def test_a_budget_that_never_allows_fails_the_node_across_a_kill_and_someone_elses_cordon_is_kept(real, tmp_path):
    """node-2 was cordoned by someone else. The budget allows no eviction: the first node to drain
    times out (counted across a SIGKILL of its agent: the restart adds one wait at most), fails, stays
    cordoned, and the rollout halts. Then the budget is gone and the object changes: the new state
    drains both nodes, uncordons the one it cordoned, and leaves node-2 cordoned."""
    install(real, tmp_path, "restricted", config=steps_config(drain={"timeout_seconds": 40}))
    wait_rolled_out(real)
    web_deployment(real, "db", 2, 2)
    kubectl("cordon", "node-2", kubeconfig=real.kubeconfig)
    try:
        create_widget(real, "blocked", 1)
        blocked = wait_until(lambda: nodes_that_logged(real, "node drain blocked"), "a drain blocked by the budget",
                             timeout=120)
        first = blocked[0]
        # Kill point: the agent SIGKILLed in the drain; the kubelet restarts it, and it goes on
        # draining (not cordoning again) with the time its drain had left.
        pid = agent_on(real, first)
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: agent_on(real, first) not in (None, pid), f"the agent on {first} restarted", timeout=120)
        failed = wait_until(lambda: agent_events(real, first, "node step failed"), f"{first} failing its drain",
                            timeout=120)
        assert failed[0]["error"].startswith("drain timed out after 40.0s"), failed
        assert not agent_events(real, first, "node cordoned"), "cordoned again after the restart"
        assert unschedulable(real, first)  # kept cordoned for a person (on_failure: keep_cordoned)
        other = "node-2" if first == "node-1" else "node-1"
        wait_until(lambda: widget_events(real, "blocked", "RolloutHalted"), "the rollout halted", timeout=60)
        assert not widget_file(real, first, "blocked").exists() and not widget_file(real, other, "blocked").exists()
        # The fix: no budget, and a new state of the object.
        real.kube.request("DELETE", f"/apis/policy/v1/namespaces/{WIDGET_NS}/poddisruptionbudgets/db")
        real.kube.request("PATCH", f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets/blocked",
                          {"spec": {"size": 2}}, "application/merge-patch+json")
        for i in range(1, NODES + 1):
            wait_until(lambda: widget_file(real, f"node-{i}", "blocked").exists(), f"the hook on node-{i}", timeout=240)
            wait_until(lambda: agent_events(real, f"node-{i}", "rollout node done"), f"node-{i} done", timeout=120)
        assert not unschedulable(real, "node-1") and not cordon_marks(real, "node-1")
        assert unschedulable(real, "node-2") and not cordon_marks(real, "node-2"), "someone else's cordon was undone"
    finally:
        remove_web(real, "db")
        back_to_the_overlay(real, tmp_path)


def test_a_drain_leaves_the_replacements_that_tolerate_the_cordon_as_kubectl_drain_does(real, tmp_path):
    """Pods that tolerate the cordon (many operators and CNI components do) come back to the
    cordoned node: the drain evicts the pods that were there when it started, waits for those by
    uid, and leaves their replacements running there, as `kubectl drain` does. (Evicting the
    replacements too, the drain would never finish.)"""
    install(real, tmp_path, "restricted", config=steps_config(drain={"timeout_seconds": 120}))
    wait_rolled_out(real)
    web_deployment(real, "tolerant", 2, 1, tolerate_cordon=True)
    try:
        at_start = {p[1] for p in web_pods(real, "tolerant")}
        replacements = {}
        with CordonWatch(real) as watch:
            create_widget(real, "tolerated", 1)
            for i in range(1, NODES + 1):
                node = f"node-{i}"
                wait_until(lambda: agent_events(real, node, "rollout node done"), f"{node} done", timeout=240)
                (drained,) = agent_events(real, node, "node drained")
                # The pod there at the start is gone; its replacement came back and was left running.
                here = [p[1] for p in web_pods(real, "tolerant") if p[0] == node and not p[3]]
                assert len(here) == 1 and here[0] not in at_start, (node, web_pods(real, "tolerant"))
                replacements[node] = here[0]
                assert not unschedulable(real, node) and not cordon_marks(real, node), node
                print(f"{node}: drained with {drained['evictions']} Eviction calls")
        assert watch.most == 1, f"{watch.most} nodes cordoned at once; max_nodes is 1"
        # Never evicted afterwards either: the same replacements, Ready.
        wait_until(lambda: sorted(p[1] for p in web_pods(real, "tolerant") if p[2] and not p[3]) ==
                   sorted(replacements.values()), "the replacements Ready where they came back")
    finally:
        remove_web(real, "tolerant")
        back_to_the_overlay(real, tmp_path)


def test_the_agents_own_daemonset_updated_mid_drain_resumes_the_drain_and_cordons_no_second_node(real, tmp_path):
    """The budget holds the first node's drain; then the agents' DaemonSet is updated there, and the
    new agent takes a minute to start, longer than the drain's timeout (45 s) and the slot lease (30 s).
    The node stays cordoned and counts against max_nodes meanwhile, so the other node is not
    cordoned; the new agent resumes the drain (no second cordon) with the time the drain had left,
    not failed for the time it was away; once the budget goes, the rollout goes on."""
    install(real, tmp_path, "restricted", config=steps_config(drain={"timeout_seconds": 45}))
    wait_rolled_out(real)
    web_deployment(real, "db", 2, 2)
    try:
        with CordonWatch(real) as watch:
            create_widget(real, "updated", 1)
            first = wait_until(lambda: nodes_that_logged(real, "node drain blocked"), "a drain blocked by the budget",
                               timeout=120)[0]
            t0 = time.monotonic()
            old_pod = slow_start(real, first)
            wait_until(lambda: any(p["spec"].get("nodeName") == first and p["metadata"]["name"] != old_pod
                                   for p in pods(real)), f"the new agent pod on {first}", timeout=180)
            try:
                resumed = wait_until(lambda: agent_events(real, first, "node drain blocked"),
                                     f"the new agent on {first} resuming the drain", timeout=180)
            except pytest.fail.Exception as e:
                pytest.fail(f"{e}\n{rollout_story(real)}")
            away = time.monotonic() - t0
            assert not agent_events(real, first, "node step failed"), "failed for the time the agent was away"
            assert not agent_events(real, first, "node cordoned"), "cordoned again"
            assert unschedulable(real, first) and cordon_marks(real, first)
            real.kube.request("DELETE", f"/apis/policy/v1/namespaces/{WIDGET_NS}/poddisruptionbudgets/db")
            try:
                wait_until(lambda: agent_events(real, first, "node drained"), f"{first} drained", timeout=60)
            except pytest.fail.Exception as e:
                pytest.fail(f"{e}\n{rollout_story(real)}\n{web_pods(real, 'db')}")
            moved = time.monotonic() - t0
            for i in range(1, NODES + 1):
                wait_until(lambda: agent_events(real, f"node-{i}", "rollout node done"), f"node-{i} done",
                           timeout=240)
                assert widget_file(real, f"node-{i}", "updated").exists()
        assert watch.most == 1, f"{watch.most} nodes cordoned at once; max_nodes is 1"
        print(json.dumps({"agent_away_seconds": round(away, 1), "drain_resumed_at": resumed[0]["ts"],
                          "update_to_drained_seconds": round(moved, 1), "most_cordoned": watch.most}))
    finally:
        remove_web(real, "db")
        no_slow_start(real)
        back_to_the_overlay(real, tmp_path)


def test_a_reboot_the_hook_asks_for_is_proven_by_the_new_boot_id_and_the_rollout_goes_on(real, tmp_path):
    """Each node in turn: cordoned, its hook asks for a reboot, the node goes down (kubelet,
    containerd, pods) and comes back on a new boot ID; the agent that starts there proves the
    reboot (its boot ID and the kubelet's agree), uncordons, and the other node follows. The hook
    ran once per node; a restart of the agent without a reboot changes nothing."""
    config = steps_config(cordon=True, reboot={"argv": REBOOT_ASK, "timeout_seconds": 300})
    install(real, tmp_path, "restricted", config=config, hook=REBOOT_HOOK)
    wait_rolled_out(real)
    requested = real.host_path("node-1", "/var/lib/nodehook-widgets/reboot-requested")
    try:
        create_widget(real, "rebooted", 1)
        for _ in range(NODES):
            def asked():
                for i in range(1, NODES + 1):
                    f = real.host_path(f"node-{i}", "/var/lib/nodehook-widgets/reboot-requested")
                    if f.exists():
                        return f"node-{i}", f
                return None
            node, requested = wait_until(asked, "a node asking for its reboot", timeout=240)
            before = (real.node_dir(node) / "boot_id").read_text().strip()
            assert unschedulable(real, node) and cordon_marks(real, node)
            slot = next(l for l in real.kube.request("GET", "/apis/coordination.k8s.io/v1/namespaces/nodehook/leases")[
                "items"] if (l["spec"].get("holderIdentity") == node
                             and (l["metadata"].get("labels") or {}).get("nodehook.io/rollout-kind") == "slot"))
            assert slot["metadata"]["annotations"]["nodehook.io/rollout-phase"] == "rebooting"
            assert slot["spec"]["leaseDurationSeconds"] >= 300
            # A restart of the agent alone (same boot ID) is no reboot.
            os.kill(agent_on(real, node), signal.SIGKILL)
            wait_until(lambda: agent_on(real, node) is not None, f"the agent on {node} restarted", timeout=120)
            requested.unlink()
            after = reboot_node(real, node)
            assert after != before
            t0 = time.monotonic()
            done = wait_until(lambda: agent_events(real, node, "rollout node done"), f"{node} done after its reboot",
                              timeout=240)
            proven = agent_events(real, node, "node rebooted")[0]
            started = agent_events(real, node, "orphan reaper started")[0]  # the agent's first line
            print(f"{node}: boot {before[:8]} -> {after[:8]}; the agent proved the reboot "
                  f"{parse_time(proven['ts']) - parse_time(started['ts']):.1f} s after it started, done "
                  f"{parse_time(done[0]['ts']) - parse_time(started['ts']):.1f} s after; "
                  f"{time.monotonic() - t0:.1f} s from the node's start to done, by the test's clock")
            assert proven["boot_id"] == after and proven["node_boot_id"] == after, proven
            assert not unschedulable(real, node) and not cordon_marks(real, node)
            runs = real.host_path(node, f"/var/lib/nodehook-widgets/{WIDGET_NS}_rebooted.runs").read_text().splitlines()
            assert runs == [f"create ran on boot {before}"], runs
    finally:
        back_to_the_overlay(real, tmp_path)


def test_a_reboot_that_never_happens_fails_the_node_and_halts_the_rollout(real, tmp_path):
    """The hook asks for a reboot, the reboot command runs, and the node never reboots: its agent
    sees the same boot ID, and at the reboot's timeout the node fails the state, stays cordoned
    (on_failure: keep_cordoned) and the rollout halts; no other node starts."""
    config = steps_config(cordon=True, reboot={"argv": REBOOT_ASK, "timeout_seconds": 20})
    install(real, tmp_path, "restricted", config=config, hook=REBOOT_HOOK)
    wait_rolled_out(real)
    try:
        create_widget(real, "unrebooted", 1)
        failed = wait_until(lambda: nodes_that_logged(real, "node step failed"), "a node failing its reboot",
                            timeout=120)
        first = failed[0]
        line = agent_events(real, first, "node step failed")[0]
        assert line["error"].startswith("no reboot within 20.0s: the boot ID is still "), line
        assert unschedulable(real, first) and cordon_marks(real, first)
        wait_until(lambda: widget_events(real, "unrebooted", "RolloutHalted"), "the rollout halted", timeout=60)
        other = "node-2" if first == "node-1" else "node-1"
        assert not unschedulable(real, other)
        assert not real.host_path(other, f"/var/lib/nodehook-widgets/{WIDGET_NS}_unrebooted.runs").exists()
    finally:
        back_to_the_overlay(real, tmp_path)

