"""Fleet rollouts (issue 17) against the real API server: six agents as six nodes, one widget
resource with a rollout policy, and singleton-hook recording every run's start and end on the
host's monotonic clock. The oracle is those records, never the agents' logs: at any instant, the
nodes with a run open are the nodes inside the gate (no soak or verify in these tests, so inside
means running), and they must never be more than max_nodes."""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import Agent, parse_log_line, stop_faulted, wait_until
from kube import ApiError, create_node, set_node_labels
from singleton_runs import HOOK, read_runs
from test_fleet import kubectl_nodehook  # noqa: F401 (a fixture)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from recovery_times import FreezableProxy, proxied_kubeconfig  # noqa: E402

NODES = [f"roll-{c}" for c in "abcdef"]
HOLD = "nodehook.io/rollout-hold"
# What each agent said about its slots: printed when a limit check fails.
SLOT_EVENTS = {"rollout slot taken", "rollout slot not taken", "rollout slot lost", "rollout node done",
               "rollout node failed", "hook interrupted"}


class Fleet:
    def __init__(self, cluster, widgets, tmp_path, policy, proxied=False, resource_options=None, **tuning):
        self.cluster, self.widgets, self.tmp = cluster, widgets, tmp_path
        self.run_log = tmp_path / "runs.log"
        self.agents = {}
        self.proxies = {}  # node -> its FreezableProxy, when proxied: a cut freezes one node's API
        for node in NODES:
            name = self.node_name(node, widgets)
            reach = cluster
            if proxied:
                self.proxies[name] = FreezableProxy(int(cluster.kube.server.rsplit(":", 1)[1]))
                reach = proxied_kubeconfig(cluster, self.proxies[name], tmp_path / f"kubeconfig-{node}")
            self.agents[name] = Agent(
                name, tmp_path / node, reach, widgets.namespace, ("create", "update"),
                {"lease_namespace": widgets.namespace, "reconnect_max_ms": 2000, **tuning}, hook=HOOK,
                env={"E2E_SINGLETON_LOG": str(self.run_log)},
                resource_options={"rollout": {"failure_after_retries": 1, "slot_lease_seconds": 6, **policy},
                                  **(resource_options or {})})

    @staticmethod
    def node_name(node, widgets):
        """The agent's node name: unique per test run and namespace."""
        return f"{node}-{os.getpid()}-{widgets.namespace}"

    def start(self):
        for agent in self.agents.values():
            agent.start()
        wait_until(lambda: len(self.node_leases()) == len(self.agents), "every agent's node Lease")
        return self

    def stop(self):
        stop_faulted(self.agents.values(), self.proxies.values())

    def leases(self):
        items = self.cluster.kube.request(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/{self.widgets.namespace}/leases").get("items", [])
        return [i for i in items if "nodehook.io/rollout" in (i["metadata"].get("labels") or {})]

    def node_leases(self):
        return [i for i in self.leases() if i["metadata"]["labels"].get("nodehook.io/rollout-kind") == "node"]

    def results(self, uid):
        """node -> (state, result) for the object, from the node Leases."""
        out = {}
        for lease in self.node_leases():
            results = json.loads(lease["metadata"]["annotations"].get("nodehook.io/rollout-results", "{}"))
            if uid in results:
                out[lease["spec"]["holderIdentity"]] = result_entry(results[uid])
        return out

    def runs(self, name):
        return [r for r in read_runs(self.run_log) if r.name == name]

    def done_nodes(self, name):
        return {r.node for r in self.runs(name) if r.how == "done"}

    def story(self, runs):
        """The runs, then every agent's slot log lines (all its runs) in time order."""
        lines = []
        for agent in self.agents.values():
            for path in sorted(agent.log_path.parent.glob("agent-*.log")):
                for line in path.read_text(errors="replace").splitlines():
                    fields = parse_log_line(line)
                    if fields.get("event") in SLOT_EVENTS:
                        lines.append((fields.get("ts", ""), f"{agent.node}: {line}"))
        return "\n".join([repr(runs)] + [line for _, line in sorted(lines)])

    def waiting(self, reason):
        """Agents that logged "rollout waiting" with this reason in their current run."""
        return {a.node for a in self.agents.values() if any(e.get("reason") == reason
                                                           for e in a.log_events("rollout waiting"))}

    def events(self, reason):
        items = self.cluster.kube.request(
            "GET", f"/apis/events.k8s.io/v1/namespaces/{self.widgets.namespace}/events").get("items", [])
        return [e for e in items if e.get("reason") == reason]


def result_entry(entry):
    """(state, "done"|"failed") of one node-Lease result: "done|failed|failed-canary <state> <at_ms> [message]"."""
    kind, state = entry.split(" ", 2)[:2]
    return state, "failed" if kind.startswith("failed") else kind


def slots_held(agent):
    """The agent's nodehook_rollout_slots_held gauge (1 while it holds a slot), from its /metrics."""
    with urllib.request.urlopen(agent.health_url("/metrics"), timeout=5) as resp:
        text = resp.read().decode()
    return sum(float(m.group(1)) for m in re.finditer(r"^nodehook_rollout_slots_held(?:\{[^}]*\})? (\S+)$", text, re.M))


def lease_writes(agent):
    """The agent's writes to Leases so far (creates and updates), from its /metrics."""
    with urllib.request.urlopen(agent.health_url("/metrics"), timeout=5) as resp:
        text = resp.read().decode()
    total = 0
    for line in text.splitlines():
        m = re.match(r'nodehook_api_requests_total\{(.*)\} (\S+)$', line)
        if m and 'resource="leases' in m.group(1) and re.search(r'verb="(create|update|replace|put|post)"', m.group(1)):
            total += float(m.group(2))
    return int(total)


def most_inside(runs):
    """The most nodes with a run open at one instant."""
    edges = sorted([(r.start, 1, r.node) for r in runs] + [(r.end, -1, r.node) for r in runs])
    inside, most = 0, 0
    for _, step, _ in edges:
        inside += step
        most = max(most, inside)
    return most


def slot_taken_over(runs, victim, since):
    """When, after `since`, two runs of other nodes were open at once (max_nodes 2): the victim's
    slot had been taken by another node by then."""
    others = [r for r in runs if r.node != victim and r.end > since]
    for r in sorted(others, key=lambda r: r.start):
        if r.start > since and any(o is not r and o.start <= r.start < o.end for o in others):
            return r.start
    return float("nan")


@pytest.fixture
def fleet_of(cluster, widgets, tmp_path):
    made = []

    def make(policy, proxied=False, resource_options=None, **tuning):
        fleet = Fleet(cluster, widgets, tmp_path, policy, proxied=proxied, resource_options=resource_options, **tuning)
        made.append(fleet)
        return fleet.start()

    yield make
    for fleet in made:
        fleet.stop()


def test_at_most_max_nodes_run_at_once_and_every_node_finishes_each_state(fleet_of, widgets):
    fleet = fleet_of({"max_nodes": 2})
    widgets.create("w1", {"seconds": 2.0})  # longer than a retry after a lost race for a slot
    wait_until(lambda: fleet.done_nodes("w1") == set(fleet.agents), "every node done with w1", timeout=90)
    first = fleet.runs("w1")
    assert most_inside(first) == 2, fleet.story(first)  # the gate let two in at once, never three
    # One gated change from idle: a node whose result is in may not have released its slot yet, and
    # would go on with that slot for the update (rollout_gate.cc) without taking one.
    wait_until(lambda: all(slots_held(agent) == 0 for agent in fleet.agents.values()), "every slot released")
    before = {name: lease_writes(agent) for name, agent in fleet.agents.items()}
    widgets.patch_spec("w1", {"seconds": 2.5})
    wait_until(lambda: len([r for r in fleet.runs("w1") if r.how == "done"]) == 2 * len(fleet.agents),
               "every node done with the update", timeout=90)
    assert most_inside(fleet.runs("w1")) == 2, fleet.story(fleet.runs("w1"))
    assert {r.reason for r in fleet.runs("w1")} == {"create", "update"}
    # A hook's run is logged done when the hook exits; its node writes the result and releases the
    # slot after that.
    wait_until(lambda: all(slots_held(agent) == 0 for agent in fleet.agents.values()), "every slot released again")
    writes = sorted(lease_writes(agent) - before[name] for name, agent in fleet.agents.items())
    print(f"lease writes per node for one gated change (2.5 s hook, no soak): {writes}")
    assert all(w >= 3 for w in writes)  # take, result, release: each node wrote its part


def test_a_failing_canary_stops_every_other_node_until_its_state_is_resumed(fleet_of, widgets):
    fleet = fleet_of({"max_nodes": 3, "canary_nodes": 1, "soak_seconds": 2})
    for agent in fleet.agents.values():
        (agent.control_dir / "fail").write_text("")
    w = widgets.create("w1", {"seconds": 0.3})
    uid = w["metadata"]["uid"]
    failed = wait_until(lambda: [n for n, (_, result) in fleet.results(uid).items() if result == "failed"],
                        "the canary's failure in its node Lease")
    others = set(fleet.agents) - set(failed)
    # The coordinator judges the halt; the others wait for a slot it no longer grants.
    wait_until(lambda: fleet.events("RolloutHalted") and fleet.waiting("queued") >= others,
               "the halt posted, every other node waiting for a slot")
    assert {r.node for r in fleet.runs("w1")} == set(failed)  # nobody but the canary ever started
    assert len(failed) == 1
    wait_until(lambda: fleet.events("RolloutHalted"), "the RolloutHalted Event")
    # Resume the halted state: the canary's retry and then everyone else go on.
    for agent in fleet.agents.values():
        (agent.control_dir / "fail").unlink()
    state = fleet.results(uid)[failed[0]][0]
    widgets.kube.request("PATCH", f"{widgets.base}/w1",
                         {"metadata": {"annotations": {"nodehook.io/rollout-resume": state}}},
                         "application/merge-patch+json")
    wait_until(lambda: fleet.done_nodes("w1") == set(fleet.agents), "every node done after the resume", timeout=90)
    assert len(fleet.events("RolloutHalted")) == 1  # once per state, not once per node


def test_two_failed_nodes_halt_the_state_and_a_newer_state_starts_afresh(fleet_of, widgets):
    fleet = fleet_of({"max_nodes": 2, "max_failed_nodes": 2})
    for agent in fleet.agents.values():
        (agent.control_dir / "fail").write_text("")
    w = widgets.create("w1", {"seconds": 0.3})
    uid = w["metadata"]["uid"]
    wait_until(lambda: len([1 for _, r in fleet.results(uid).values() if r == "failed"]) >= 2, "two failed nodes")
    # A node may take a slot freed by the first failure before the second is written: a halt is
    # seen once written, so at most max_failed_nodes + max_nodes - 1 nodes ever start. Such a
    # third node may be granted its slot before the halt and start its hook after the halt is
    # posted, so which nodes ran is read from the coordinator's grants, logged before its halt
    # (one thread), and each of them must have its result.
    def halted():
        if not [e for a in fleet.agents.values() for e in a.log_events("rollout halted") if e.get("uid") == uid]:
            return False
        granted = {e["node"] for a in fleet.agents.values() for e in a.log_events("rollout slot granted")
                   if e.get("uid") == uid}
        return (fleet.events("RolloutHalted") and granted <= set(fleet.results(uid)) and
                fleet.waiting("queued") >= set(fleet.agents) - granted)
    wait_until(halted, "the halt posted, every node granted a slot with its result, the others waiting for a slot")
    failed = {n for n, (_, r) in fleet.results(uid).items() if r == "failed"}
    assert {r.node for r in fleet.runs("w1")} == failed
    assert 2 <= len(failed) <= 3
    for agent in fleet.agents.values():
        (agent.control_dir / "fail").unlink()
    widgets.patch_spec("w1", {"seconds": 0.2})  # a new state: a rollout of its own
    wait_until(lambda: {r.node for r in fleet.runs("w1") if r.how == "done" and r.reason == "update"} |
               {r.node for r in fleet.runs("w1") if r.how == "done" and r.reason == "create"} == set(fleet.agents),
               "every node done with the new state", timeout=90)
    assert most_inside(fleet.runs("w1")) <= 2, fleet.story(fleet.runs("w1"))


def test_a_fix_after_a_failure_runs_on_every_node_though_the_failed_state_held_the_only_slot(fleet_of, widgets):
    # The failed state is retried (failure_after_retries 5), so its node keeps the one slot; the
    # object is then fixed, as docs/rollouts.md recommends.
    fleet = fleet_of({"max_nodes": 1, "failure_after_retries": 5})
    for agent in fleet.agents.values():
        (agent.control_dir / "fail").write_text("")
    widgets.create("w1", {"seconds": 0.3})
    failed = wait_until(lambda: [r for r in fleet.runs("w1") if r.how == "failed"], "the first node's failure")
    for agent in fleet.agents.values():
        (agent.control_dir / "fail").unlink()
    fixed_at = time.monotonic()
    widgets.patch_spec("w1", {"seconds": 0.4})
    wait_until(lambda: fleet.done_nodes("w1") == set(fleet.agents), "the fixed state done on every node", timeout=90)
    runs = fleet.runs("w1")
    assert most_inside(runs) == 1, fleet.story(runs)
    print(f"the fixed state ran on all {len(fleet.agents)} nodes {time.monotonic() - fixed_at:.1f}s after the fix; "
          f"first failure on {failed[0].node}")


@pytest.mark.parametrize("edit", ["annotate", "delete"])
def test_a_slot_lease_edited_or_deleted_by_hand_neither_restarts_the_hook_nor_lets_a_second_node_in(
        fleet_of, widgets, edit):
    fleet = fleet_of({"max_nodes": 1})
    widgets.create("w1", {"seconds": 6.0})
    holder = wait_until(lambda: [r.node for r in fleet.runs("w1")], "the first node inside")[0]
    slot = wait_until(lambda: [lease for lease in fleet.leases()
                               if lease["metadata"]["labels"].get("nodehook.io/rollout-kind") == "slot"
                               and lease["spec"].get("holderIdentity") == holder], "the holder's slot Lease")[0]
    path = f"/apis/coordination.k8s.io/v1/namespaces/{widgets.namespace}/leases/{slot['metadata']['name']}"
    if edit == "annotate":  # an audit tool, a mutating policy, a person
        widgets.kube.request("PATCH", path, {"metadata": {"annotations": {"example.com/audited": "yes"}}},
                             "application/merge-patch+json")
    else:
        widgets.kube.request("DELETE", path)
    wait_until(lambda: fleet.done_nodes("w1") == set(fleet.agents), "every node done", timeout=150)
    runs = fleet.runs("w1")
    assert most_inside(runs) == 1, fleet.story(runs)
    assert [r.how for r in runs if r.node == holder] == ["done"], fleet.story(runs)  # one run, not restarted


def test_a_held_node_waits_while_the_others_finish(fleet_of, widgets, cluster):
    # The label is there before the agents start: their workers wait for their Node's first list,
    # so the held node knows it is held before it could see the widget.
    held = Fleet.node_name(NODES[0], widgets)
    try:
        create_node(cluster.kube, held, {HOLD: "true"})
    except ApiError as e:
        if e.status != 409:
            raise
        set_node_labels(cluster.kube, held, {HOLD: "true"})
    fleet = fleet_of({"max_nodes": 3})
    assert held in fleet.agents
    widgets.create("w1", {"seconds": 0.2})
    wait_until(lambda: fleet.done_nodes("w1") == set(fleet.agents) - {held}, "the others done", timeout=90)
    wait_until(lambda: held in fleet.waiting("held"), "the held node waiting on its label")
    assert held not in {r.node for r in fleet.runs("w1")}
    set_node_labels(cluster.kube, held, {HOLD: None})
    wait_until(lambda: held in fleet.done_nodes("w1"), "the held node done once released")


@pytest.mark.parametrize("fault", ["kill", "stop", "cut"])
def test_a_slot_holder_killed_stopped_or_cut_off_frees_its_slot_and_the_rollout_completes(fleet_of, widgets, fault):
    fleet = fleet_of({"max_nodes": 2}, proxied=fault == "cut")
    widgets.create("w1", {"seconds": 4.0})
    victim = wait_until(lambda: [r for r in fleet.runs("w1") if r.how is None], "a run inside a slot")[0].node
    agent = fleet.agents[victim]
    faulted_at = time.monotonic()
    if fault == "kill":
        agent.kill()
    elif fault == "stop":
        agent.proc.send_signal(signal.SIGSTOP)
    else:  # bytes stop both ways, sockets stay open, new connections hang
        fleet.proxies[victim].freeze(new_too=True)
    # The others go on: the victim's slot frees itself once its lease runs out unrenewed.
    wait_until(lambda: len(fleet.done_nodes("w1") - {victim}) == len(fleet.agents) - 1,
               "every other node done", timeout=120)
    handover = slot_taken_over(fleet.runs("w1"), victim, faulted_at) - faulted_at
    if fault == "kill":
        agent.start()
    elif fault == "stop":
        agent.proc.send_signal(signal.SIGCONT)
    else:
        fleet.proxies[victim].thaw()
    wait_until(lambda: victim in fleet.done_nodes("w1"), "the victim's run again, inside a slot", timeout=90)
    assert most_inside(fleet.runs("w1")) <= 2, fleet.story(fleet.runs("w1"))
    print(f"{fault}: the victim's slot was taken by another node {handover:.1f}s after the fault")


def coordinator(fleet):
    """The node whose agent holds the rollout's coordinator Lease now (None when nobody does)."""
    items = fleet.cluster.kube.request(
        "GET", f"/apis/coordination.k8s.io/v1/namespaces/{fleet.widgets.namespace}/leases").get("items", [])
    for lease in items:
        if lease["metadata"]["name"].endswith("-coordinator"):
            holder = lease["spec"].get("holderIdentity") or ""
            return next((node for node in fleet.agents if holder == node or holder.startswith(node + "_")), None)
    return None


@pytest.mark.parametrize("fault", ["kill", "stop"])
def test_a_killed_or_stopped_coordinator_is_replaced_and_the_rollout_completes_within_the_limit(
        fleet_of, widgets, fault):
    """The coordinator is the one agent that reads every node Lease and grants the slots. SIGKILL or
    SIGSTOP it while nodes wait for slots: another agent takes its Lease over, grants from its own
    watch, and the rollout completes with never more than max_nodes inside. The faulted node runs it
    when back; a stopped coordinator that wakes with a stale board grants nothing it may not (each
    grant is conditioned on the slot's version it judged)."""
    fleet = fleet_of({"max_nodes": 2})
    first = wait_until(lambda: coordinator(fleet), "a coordinator")
    names = [f"w{i}" for i in range(3)]
    for name in names:
        widgets.create(name, {"seconds": 1.5})
    wait_until(lambda: any(r.how == "done" for name in names for r in fleet.runs(name)), "a first run done")
    if fault == "kill":
        fleet.agents[first].kill()
    else:
        fleet.agents[first].proc.send_signal(signal.SIGSTOP)
    killed_at = time.monotonic()
    second = wait_until(lambda: (c := coordinator(fleet)) != first and c, "another coordinator", timeout=90)
    replaced = time.monotonic() - killed_at
    others = set(fleet.agents) - {first}
    wait_until(lambda: all(fleet.done_nodes(name) >= others for name in names), "every other node done with every object",
               timeout=180)
    if fault == "kill":
        fleet.agents[first].start()
    else:
        fleet.agents[first].proc.send_signal(signal.SIGCONT)
    wait_until(lambda: all(fleet.done_nodes(name) == set(fleet.agents) for name in names),
               "the faulted node done with every object", timeout=120)
    for name in names:
        assert most_inside(fleet.runs(name)) <= 2, fleet.story(fleet.runs(name))
    # One slot per node at a time, so across the objects too: never more than two runs open at once.
    assert most_inside([r for name in names for r in fleet.runs(name)]) <= 2
    print(f"coordinator {first} faulted ({fault}); {second} coordinated {replaced:.1f}s later")


def test_an_agent_stopped_while_it_waits_for_a_slot_asks_again_when_woken_and_finishes(fleet_of, widgets):
    """An agent stopped (SIGSTOP: a frozen VM, a debugger) after it asked for a slot: the coordinator
    grants it one, withdraws the lapsed grant (granting that node nothing more until its node Lease
    changes) and lets the others through. The slot Leases are then deleted by hand, so nothing of the
    grant is left in the stopped node's name. Woken, it reads the grant and its end, asks again and
    finishes; never more than max_nodes ran at once."""
    fleet = fleet_of({"max_nodes": 1})
    boss = wait_until(lambda: coordinator(fleet), "a coordinator")
    widgets.create("w1", {"seconds": 3.0})  # long enough to stop a waiting node before its turn

    def slots():
        return [lease for lease in fleet.leases() if lease["metadata"]["labels"].get("nodehook.io/rollout-kind") == "slot"]

    def asking():
        return {lease["spec"]["holderIdentity"] for lease in fleet.node_leases()
                if (lease["metadata"].get("annotations") or {}).get("nodehook.io/rollout-requests", "{}") != "{}"}

    def a_waiting_node():
        inside = {lease["spec"].get("holderIdentity") for lease in slots()} - {None, ""}
        # The holder's run started under half its 3 s ago (singleton-hook records CLOCK_MONOTONIC):
        # the slot cannot move to the victim before it is stopped.
        fresh = [r for r in fleet.runs("w1") if r.node in inside and r.how is None and time.monotonic() - r.start < 1.5]
        waiting = asking() - inside - {boss} - fleet.done_nodes("w1")
        return fresh and waiting and sorted(waiting)[0]

    victim = wait_until(a_waiting_node, "a node whose run just started inside and another one asking")
    fleet.agents[victim].proc.send_signal(signal.SIGSTOP)
    others = set(fleet.agents) - {victim}
    wait_until(lambda: fleet.done_nodes("w1") >= others, "every other node done", timeout=120)
    withdrawn = wait_until(lambda: [e for a in fleet.agents.values() if a.node != victim
                                    for e in a.log_events("rollout grant withdrawn") if e.get("node") == victim],
                           f"the grant to the stopped {victim} withdrawn", timeout=60)
    assert victim not in fleet.done_nodes("w1")
    for lease in slots():
        fleet.cluster.kube.request(
            "DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{widgets.namespace}/leases/{lease['metadata']['name']}")
    fleet.agents[victim].proc.send_signal(signal.SIGCONT)
    wait_until(lambda: victim in fleet.done_nodes("w1"), f"{victim} done once woken", timeout=90)
    assert most_inside(fleet.runs("w1")) <= 1, fleet.story(fleet.runs("w1"))
    print(f"{victim} stopped while it waited; its grant withdrawn at {withdrawn[0].get('time')}")


def test_a_node_lease_whose_ask_someone_took_out_is_written_again_and_the_node_finishes(fleet_of, widgets):
    """`kubectl annotate lease ... nodehook.io/rollout-requests-` on a waiting node's Lease: the
    coordinator no longer sees its ask. Its node writes the Lease again (`rollout node lease edited`)
    and finishes with the others."""
    fleet = fleet_of({"max_nodes": 1})
    widgets.create("w1", {"seconds": 2.0})

    def waiting_lease():
        inside = {lease["spec"].get("holderIdentity") for lease in fleet.leases()
                  if lease["metadata"]["labels"].get("nodehook.io/rollout-kind") == "slot"}
        for lease in fleet.node_leases():
            node = lease["spec"]["holderIdentity"]
            asks = (lease["metadata"].get("annotations") or {}).get("nodehook.io/rollout-requests", "{}")
            if asks != "{}" and node not in inside and node not in fleet.done_nodes("w1"):
                return lease
        return None

    lease = wait_until(waiting_lease, "a node asking while another is inside")
    node = lease["spec"]["holderIdentity"]
    fleet.cluster.kube.request(
        "PATCH", f"/apis/coordination.k8s.io/v1/namespaces/{widgets.namespace}/leases/{lease['metadata']['name']}",
        {"metadata": {"annotations": {"nodehook.io/rollout-requests": None}}}, "application/merge-patch+json")
    wait_until(lambda: fleet.agents[node].log_events("rollout node lease edited"), f"{node} sees its Lease edited")
    wait_until(lambda: fleet.done_nodes("w1") == set(fleet.agents), "every node done", timeout=120)
    assert most_inside(fleet.runs("w1")) <= 1, fleet.story(fleet.runs("w1"))


def test_an_api_server_restart_mid_rollout_keeps_the_limit_and_completes(fleet_of, widgets, cluster):
    fleet = fleet_of({"max_nodes": 2})
    widgets.create("w1", {"seconds": 2.0})
    wait_until(lambda: fleet.runs("w1"), "the rollout under way")
    cluster.stop()
    cluster.start()
    wait_until(lambda: fleet.done_nodes("w1") == set(fleet.agents), "every node done after the restart", timeout=150)
    assert most_inside(fleet.runs("w1")) <= 2, fleet.story(fleet.runs("w1"))


def test_gated_work_starts_only_inside_a_window_declared_in_another_time_zone(fleet_of, widgets):
    # Windows start on the minute: pick the first minute boundary at least 15 s away, and declare
    # it in Asia/Kolkata (UTC+5:30), which is not this machine's zone (the tests run in UTC).
    now = time.time()
    opens = (int(now) // 60 + 1) * 60
    if opens - now < 15:
        opens += 60
    local = time.gmtime(opens + 5 * 3600 + 1800)
    fleet = fleet_of({"max_nodes": 1, "windows": [
        {"cron": f"{local.tm_min} {local.tm_hour} * * *", "duration_seconds": 30, "time_zone": "Asia/Kolkata"}]})
    wall = time.time() - time.monotonic()  # singleton-hook's monotonic records -> Unix time
    widgets.create("w1", {"seconds": 6.0})
    wait_until(lambda: fleet.waiting("outside_window") == set(fleet.agents), "every node waiting for the window")
    assert fleet.runs("w1") == []
    # The window is 30 s and each run 6 s, one node at a time: some nodes run, the rest wait for
    # tomorrow's window. The last run may end after the window closed: running work finishes.
    wait_until(lambda: time.time() > opens + 45, "the window closed and the last run done", timeout=120)
    runs = fleet.runs("w1")
    starts = [r.start + wall for r in runs]
    assert runs, "nobody ran inside the window"
    # The agents judge by the API server's clock, read from Date headers (1 s resolution).
    assert all(opens - 1.5 <= s <= opens + 30 + 1.5 for s in starts), (opens, starts)
    assert all(r.how == "done" for r in runs)
    ran = {r.node for r in runs}
    assert ran != set(fleet.agents)
    assert fleet.waiting("outside_window") >= set(fleet.agents) - ran


def test_pause_resume_verify_soak_and_wait_from_kubectl_with_one_completed_event(fleet_of, widgets,
                                                                                 kubectl_nodehook):  # noqa: F811
    kubectl = kubectl_nodehook  # the plugin as docs/fleet.md installs it
    ns = widgets.namespace
    fleet = fleet_of({"max_nodes": 2, "soak_seconds": 3, "verify": {"argv": [str(HOOK)], "timeout_seconds": 20}})
    widgets.kube.request("POST", widgets.base, {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "annotations": {"nodehook.io/rollout-paused": "true"}}, "spec": {"seconds": 0.5}})
    wait_until(lambda: fleet.waiting("paused") == set(fleet.agents), "every node waiting on the pause")
    code, out, err = kubectl("rollout", "status", "widgets.example.com/w1", "-n", ns, "--agents-namespace", ns)
    assert code == 0, out + err
    assert "paused" in out and fleet.runs("w1") == []
    code, out, err = kubectl("rollout", "resume", "widgets.example.com/w1", "-n", ns, "--agents-namespace", ns)
    assert code == 0, out + err
    # The pipeline: resume, then wait until the fleet has the state (verified and soaked).
    code, out, err = kubectl("wait", "widgets.example.com/w1", "-n", ns, "--agents-namespace", ns, "--timeout", "120s")
    assert code == 0, out + err
    runs = fleet.runs("w1")
    for node in fleet.agents:
        mine = sorted((r for r in runs if r.node == node), key=lambda r: r.start)
        assert [r.reason for r in mine] == ["create", "verify"], mine
        assert all(r.how == "done" for r in mine)
    # Inside the gate: from the hook's start to the end of the soak after the verify.
    spans = [type("Span", (), {"start": min(r.start for r in runs if r.node == n), "node": n,
                               "end": max(r.end for r in runs if r.node == n) + 3})() for n in fleet.agents]
    assert most_inside(spans) <= 2, fleet.story(runs)
    wait_until(lambda: fleet.events("RolloutCompleted"), "the RolloutCompleted Event", timeout=30)
    # A soak ends by the API server's clock, which the agent that posted the Event and kubectl
    # each estimate from answers' Date headers (whole seconds): kubectl may see the last soaks
    # end up to a second after that agent did (seen once: two nodes still soaking).
    status = []

    def says_complete():
        status[:] = kubectl("rollout", "status", "widgets.example.com/w1", "-n", ns, "--agents-namespace", ns)
        return status[0] == 0 and "complete" in status[1]
    wait_until(says_complete, "rollout status saying complete after the RolloutCompleted Event", timeout=10)
    assert len(fleet.events("RolloutCompleted")) == 1


@pytest.fixture
def garbage_collector(cluster, tmp_path):
    """kube-controller-manager with only the garbage collector, against the session's API server:
    what deletes a node's Lease with its Node in a real cluster."""
    cache = os.environ.get("NODEHOOK_CACHE_DIR", Path(__file__).resolve().parents[2] / "build" / "cache")
    binary = Path(os.environ.get("NODEHOOK_K8S_NODE", Path(cache) / "nodehook-k8s-node"))
    if not binary.exists():
        pytest.fail(f"{binary} does not exist: test/cluster/build.sh nodes builds it (test/run-tests.sh does)")
    log = open(tmp_path / "controller-manager.log", "wb")
    proc = subprocess.Popen([str(binary), "controller-manager", "--kubeconfig", cluster.kubeconfig,
                             "--leader-elect=false", "--secure-port=0", "--controllers=garbagecollector",
                             "--use-service-account-credentials=false", "--v=1"],
                            stdout=log, stderr=subprocess.STDOUT)
    yield proc
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def test_a_node_that_left_stops_counting_for_canaries_and_completion(cluster, widgets, fleet_of, garbage_collector):
    # Every agent has its Node, which owns its node Lease. Five canaries of six nodes: the node
    # that leaves is a canary of nearly every new object (each draws its own order).
    kube = cluster.kube
    for node in NODES:
        create_node(kube, Fleet.node_name(node, widgets), {})
    fleet = fleet_of({"max_nodes": 3, "canary_nodes": 5})
    wait_until(lambda: all(lease["metadata"].get("ownerReferences") for lease in fleet.node_leases()),
               "every node Lease owned by its Node")
    leaver = sorted(fleet.agents)[0]
    fleet.agents[leaver].stop()
    kube.request("DELETE", f"/api/v1/nodes/{leaver}")
    wait_until(lambda: leaver not in {lease["spec"]["holderIdentity"] for lease in fleet.node_leases()},
               "the garbage collector deleting the node Lease of the node that left", timeout=120)
    names = [f"w{i}" for i in range(8)]
    for name in names:
        widgets.create(name, {"seconds": 0.2})
    live = set(fleet.agents) - {leaver}
    wait_until(lambda: all(fleet.done_nodes(name) == live for name in names),
               "every new object done on every live node", timeout=180)
    wait_until(lambda: len({e["regarding"]["name"] for e in fleet.events("RolloutCompleted")}) == len(names),
               "RolloutCompleted for every new object")
    assert all(leaver not in fleet.done_nodes(name) for name in names)


def test_a_targeted_object_completes_on_the_nodes_it_targets_and_a_held_node_is_no_canary(cluster, widgets, fleet_of):
    # Three GPU nodes of six; the object targets them. One of them is held: it must not be drawn
    # as the canary (the others would wait on it), and completion waits for it, not for the CPU nodes.
    kube = cluster.kube
    gpu = [Fleet.node_name(n, widgets) for n in NODES[:3]]
    for i, node in enumerate(NODES):
        create_node(kube, Fleet.node_name(node, widgets), {"pool": "gpu" if i < 3 else "cpu"})
    held = gpu[0]
    set_node_labels(kube, held, {HOLD: "true"})
    fleet = fleet_of({"max_nodes": 1, "canary_nodes": 1}, resource_options={"node_selector_path": "spec.nodeSelector"})
    wait_until(lambda: all("nodehook.io/rollout-node-labels" in lease["metadata"]["annotations"]
                           for lease in fleet.node_leases()), "every node's labels on its node Lease")
    names = [f"t{i}" for i in range(4)]
    for name in names:
        widgets.create(name, {"seconds": 0.2, "nodeSelector": {"pool": "gpu"}})
    wait_until(lambda: all(fleet.done_nodes(name) == set(gpu[1:]) for name in names),
               "every object done on the two GPU nodes not held", timeout=120)
    assert not fleet.events("RolloutCompleted")  # the held GPU node has not run them yet
    set_node_labels(kube, held, {HOLD: None})
    wait_until(lambda: all(fleet.done_nodes(name) == set(gpu) for name in names), "the held node done after the hold",
               timeout=120)
    wait_until(lambda: len({e["regarding"]["name"] for e in fleet.events("RolloutCompleted")}) == len(names),
               "RolloutCompleted for every object")
    cpu = set(fleet.agents) - set(gpu)
    assert all(not (fleet.done_nodes(name) & cpu) for name in names)
