"""A rollout's node steps (issue 28) against the real API server: two agents as two nodes, one
slot at a time, each node cordoned, drained through the Eviction API and uncordoned around its
hook, or rebooted when the hook asks. The server has no kubelet or controllers: the test plays
the disruption controller (it writes each budget's status) and the node's reboot (a new boot ID
in the agent's boot ID file and on the Node, then the agent started again). The oracles are the
API server's objects (the Node's cordon and marks, the pods, the Leases, the Events) and what the
hook itself saw of its node while it ran, never the agents' word alone."""

import json
import os
import signal
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from conftest import REPO, _binary, wait_until
from deploy_tools import kubectl_binary
from kube import ApiError, create_node
from singleton_cluster import LEASE

HOOKS = Path(__file__).resolve().parent / "hooks"
STEPS_HOOK = HOOKS / "node-steps-hook"
MARK_PREFIX = "nodehook.io/cordoned-"


class Steps:
    """Two agents as two nodes with a rollout whose node steps are `steps`."""

    def __init__(self, cluster, widgets, make_agent, tmp_path, steps, policy=None, second_steps=None):
        self.cluster, self.widgets, self.kube = cluster, widgets, cluster.kube
        self.state_file = tmp_path / "node-state.log"
        self.reboot_log = tmp_path / "reboots.log"
        self.nodes = [f"steps-{c}-{os.getpid()}-{widgets.namespace}" for c in "ab"]
        self.agents = {}
        ensure_default_account(self.kube, widgets.namespace)
        for node in self.nodes:
            if second_steps and node == self.nodes[1]:
                steps = second_steps  # the second agent's config differs in its node steps
            create_node(self.kube, node, {})
            self.set_boot_id(node, "boot-1")
            boot_file = tmp_path / f"boot-id-{node}"
            boot_file.write_text("boot-1\n")
            self_pod = f"agent-{node[6]}"
            create_pod(self.kube, widgets.namespace, self_pod, node)  # the agent's own pod: never evicted
            rollout = {"max_nodes": 1, "failure_after_retries": 1, "slot_lease_seconds": 6,
                       "verify": {"argv": [str(STEPS_HOOK), "verify"]}, **(policy or {}), **steps}
            agent = make_agent(
                node, reasons=("create", "update"), hook=STEPS_HOOK, lease_namespace=widgets.namespace,
                boot_id_file=str(boot_file), resource_options={"rollout": rollout}, **LEASE,
                env={"E2E_KUBECTL": str(kubectl_binary()), "E2E_KUBECONFIG": str(cluster.kubeconfig),
                     "E2E_NODE_STATE_FILE": str(self.state_file), "E2E_REBOOT_LOG": str(self.reboot_log),
                     "E2E_BOOT_ID_FILE": str(boot_file), "POD_NAMESPACE": widgets.namespace,
                     "POD_NAME": self_pod})
            agent.boot_file = boot_file
            self.agents[node] = agent

    def start(self):
        for agent in self.agents.values():
            agent.start()
        return self

    def node(self, node):
        return self.kube.request("GET", f"/api/v1/nodes/{node}")

    def cordoned(self, node):
        return bool(self.node(node).get("spec", {}).get("unschedulable"))

    def marks(self, node):
        notes = self.node(node)["metadata"].get("annotations") or {}
        return {k: v for k, v in notes.items() if k.startswith(MARK_PREFIX)}

    def set_boot_id(self, node, boot_id):
        self.kube.request("PATCH", f"/api/v1/nodes/{node}/status", {"status": {"nodeInfo": {"bootID": boot_id}}},
                          "application/merge-patch+json")

    def seen(self, node=None):
        """What the hook saw of its node while it ran: (reason, node, name, unschedulable, pods)."""
        if not self.state_file.exists():
            return []
        out = []
        for line in self.state_file.read_text().splitlines():
            reason, n, name, cordon, pods = line.split()
            if node is None or n == node:
                out.append((reason, n, name, cordon.split("=", 1)[1] == "true",
                            sorted(p for p in pods.split("=", 1)[1].split(",") if p)))
        return out

    def pods(self):
        items = self.kube.request("GET", f"/api/v1/namespaces/{self.widgets.namespace}/pods")["items"]
        return {(p["spec"].get("nodeName"), p["metadata"]["name"]) for p in items}

    def slot(self):
        """The slot Lease that names a holder (max_nodes 1: at most one), or None."""
        items = self.kube.request(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/{self.widgets.namespace}/leases")["items"]
        held = [i for i in items if (i["metadata"].get("labels") or {}).get("nodehook.io/rollout-kind") == "slot"
                and i["spec"].get("holderIdentity")]
        return held[0] if held else None

    def asking(self, node):
        """Whether the node's node Lease carries a request (it asked the coordinator for a slot)."""
        items = self.kube.request(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/{self.widgets.namespace}/leases")["items"]
        return any((i["metadata"].get("labels") or {}).get("nodehook.io/rollout-kind") == "node"
                   and i["spec"].get("holderIdentity") == node
                   and (i["metadata"].get("annotations") or {}).get("nodehook.io/rollout-requests") for i in items)

    def events(self, reason):
        items = self.kube.request(
            "GET", f"/apis/events.k8s.io/v1/namespaces/{self.widgets.namespace}/events")["items"]
        return [e for e in items if e.get("reason") == reason]

    def done(self, name):
        """The nodes whose hook and verify ran ok for `name` and that gave their slot back."""
        return {n for n, a in self.agents.items() if a.records(name) and a.records(name)[-1]["result"] == "ok"
                and any(e.get("object", "").endswith("/" + name) for e in a.log_events("rollout node done"))}


def ensure_default_account(kube, namespace):
    try:
        kube.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "default"}})
    except ApiError as e:
        if e.status != 409:
            raise


def create_pod(kube, namespace, name, node, labels=None, owner="ReplicaSet", spec=None):
    """A running, ready Pod bound to `node` (no kubelet: its status is written here), so the
    Eviction API holds it to its disruption budget (a pending pod would be evicted regardless).
    Controlled by a ReplicaSet unless `owner` says another kind (None: a bare pod). Its own grace
    period is 0: no kubelet confirms a graceful deletion here, so the API server deletes it at once."""
    meta = {"name": name, "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner, "name": "owner", "uid": "0000-owner",
                                    "controller": True}]
    kube.request("POST", f"/api/v1/namespaces/{namespace}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": meta,
        "spec": {"nodeName": node, "automountServiceAccountToken": False, "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "c", "image": "example:test"}], **(spec or {})}})
    kube.request("PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}/status",
                 {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
                 "application/merge-patch+json")


def create_budget(kube, namespace, name, app, allowed):
    kube.request("POST", f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}}})
    allow(kube, namespace, name, allowed)


def allow(kube, namespace, name, allowed):
    """The disruption controller's part: how many evictions the budget allows now."""
    kube.request("PATCH", f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/{name}/status",
                 {"status": {"observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": 2,
                             "desiredHealthy": 1, "expectedPods": 2}},
                 "application/merge-patch+json")


class OneAtATime:
    """The disruption controller's part for one budget, as its pods' replacements come up ready
    elsewhere: one more eviction allowed each time one of its pods is gone."""

    def __init__(self, s, budget, app):
        self.s, self.budget, self.app = s, budget, app
        self.count = None  # the pods when it last allowed one: none yet

    def pods(self):
        items = self.s.kube.request("GET", f"/api/v1/namespaces/{self.s.widgets.namespace}/pods"
                                    f"?labelSelector=app%3D{self.app}")["items"]
        return len(items)

    def step(self):
        status = self.s.kube.request("GET", f"/apis/policy/v1/namespaces/{self.s.widgets.namespace}"
                                     f"/poddisruptionbudgets/{self.budget}").get("status", {})
        now = self.pods()
        if status.get("disruptionsAllowed", 0) == 0 and (self.count is None or now < self.count):
            allow(self.s.kube, self.s.widgets.namespace, self.budget, 1)
            self.count = now
        return False


def seconds_between(earlier, later):
    parse = lambda ts: datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()  # noqa: E731
    return parse(later) - parse(earlier)


DRAIN = {"drain": {"timeout_seconds": 60}}


def test_a_drain_honours_a_budget_that_allows_one_eviction_at_a_time(cluster, widgets, make_agent, tmp_path):
    s = Steps(cluster, widgets, make_agent, tmp_path, DRAIN)
    a, b = s.nodes
    for name in ("web-1", "web-2"):
        create_pod(s.kube, widgets.namespace, name, a, {"app": "web"})
    create_pod(s.kube, widgets.namespace, "logs", a, {"app": "logs"}, owner="DaemonSet")
    create_budget(s.kube, widgets.namespace, "web", "web", 1)
    s.start()
    widgets.create("kernel", {"version": 1})
    # Node a: web-1 evicted, web-2 refused by the budget, asked again with backoff; no hook yet.
    blocked = wait_until(lambda: s.agents[a].log_events("node drain blocked"), "the budget refusing web-2 on a")
    assert blocked[0]["pod"].startswith(f"{widgets.namespace}/web-2: "), blocked
    assert (a, "web-1") not in s.pods() and (a, "web-2") in s.pods()
    assert s.cordoned(a) and list(s.marks(a)) == [m for m in s.marks(a) if m.startswith(MARK_PREFIX)]
    assert not s.agents[a].records("kernel"), "the hook ran before the drain finished"
    # `kubectl nodehook rollout status` reads the step and the pods left from the slot.
    left = "1 pod left: " + widgets.namespace + "/web-2"
    slot = wait_until(lambda: (lambda sl: sl if sl and left in sl["metadata"]["annotations"].get(
        "nodehook.io/rollout-detail", "") else None)(s.slot()), "the slot showing the pod left")
    notes = slot["metadata"]["annotations"]
    assert slot["spec"]["holderIdentity"] == a and notes["nodehook.io/rollout-phase"] == "draining", notes
    event = wait_until(lambda: s.events("NodeDrainBlocked"), "a NodeDrainBlocked Event")
    assert a in event[0]["note"] and "web-2" in event[0]["note"], event
    # The disruption controller sees web-1's replacement ready: one more eviction is allowed.
    allow(s.kube, widgets.namespace, "web", 1)
    wait_until(lambda: s.done("kernel") == {a, b}, "the rollout done on both nodes")
    # While its hook ran, each node was cordoned and held only the pods a drain leaves.
    seen = {n: [x for x in s.seen(n) if x[0] == "create"] for n in (a, b)}
    assert seen[a] == [("create", a, "kernel", True, ["agent-a", "logs"])], seen
    assert seen[b] == [("create", b, "kernel", True, ["agent-b"])], seen
    assert [x[3] for x in s.seen() if x[0] == "verify"] == [True, True]
    for node in (a, b):
        assert not s.cordoned(node) and not s.marks(node), s.node(node)
    drained = s.agents[a].log_events("node drained")
    assert drained and int(drained[0]["evictions"]) >= 3, drained  # web-1, web-2 refused, web-2
    assert len(s.agents[a].records("kernel", "create")) == 1


def blocked_drains(cluster, widgets, make_agent, tmp_path, steps, **options):
    """Two agents draining under a budget that never allows (a pod db-<letter> on each node), and a
    widget that starts the rollout."""
    s = Steps(cluster, widgets, make_agent, tmp_path, steps, **options)
    for node in s.nodes:
        create_pod(s.kube, widgets.namespace, f"db-{node[6]}", node, {"app": "db"})
    create_budget(s.kube, widgets.namespace, "db", "db", 0)
    s.start()
    widgets.create("kernel", {"version": 1})
    return s


def test_a_budget_that_never_allows_fails_the_node_and_halts_the_rollout(cluster, widgets, make_agent, tmp_path):
    s = blocked_drains(cluster, widgets, make_agent, tmp_path,
                       {"drain": {"timeout_seconds": 4}})
    failed = wait_until(lambda: [n for n, ag in s.agents.items() if ag.log_events("node step failed")],
                        "a node failing its drain")
    assert len(failed) == 1
    first, other = failed[0], [n for n in s.nodes if n != failed[0]][0]
    line = s.agents[first].log_events("node step failed")[0]
    assert line["error"].startswith("drain timed out after 4.0s; 1 pod left: ") and "disruption budget" in line["error"]
    # Kept cordoned for a person (the default), under its mark; the other node waits, halted.
    assert s.cordoned(first) and s.marks(first)
    wait_until(lambda: s.events("RolloutHalted"), "the rollout halted")
    assert not s.cordoned(other) and not s.agents[other].records("kernel")
    assert not s.agents[first].records("kernel"), "the hook ran on a node whose drain did not finish"
    # Events are posted by the agent's sender, apart from the steps: wait for them.
    wait_until(lambda: s.events("NodeKeptCordoned") and s.events("NodeStepFailed"), "the failure's Events")


def node_events(s, node, reason):
    """The Events about the Node `node` (namespace default, as the kubelet's) with `reason`."""
    items = s.kube.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events")["items"]
    return [e for e in items if e.get("reason") == reason and e.get("regarding", {}).get("kind") == "Node"
            and e["regarding"].get("name") == node]


def test_a_drain_refuses_pods_kubectl_drain_refuses_and_names_them_on_the_node(cluster, widgets, make_agent,
                                                                               tmp_path):
    """A bare pod and one with emptyDir data: as `kubectl drain` without --force and
    --delete-emptydir-data, nothing is evicted while they are there, and each is named on the
    object and on the Node. A person deletes them: the drain goes on."""
    s = Steps(cluster, widgets, make_agent, tmp_path, DRAIN)
    a, b = s.nodes
    create_pod(s.kube, widgets.namespace, "web-1", a, {"app": "web"})
    create_pod(s.kube, widgets.namespace, "bare", a, owner=None)
    create_pod(s.kube, widgets.namespace, "cache", a,
               spec={"volumes": [{"name": "scratch", "emptyDir": {}}]})
    s.start()
    widgets.create("kernel", {"version": 1})
    blocked = wait_until(lambda: (lambda lines: lines if len(lines) == 2 else None)(
        s.agents[a].log_events("node drain blocked")), "both pods named on a")
    ns = widgets.namespace
    assert sorted(line["pod"] for line in blocked) == [
        f"{ns}/bare: declares no controller, so nothing would bring it back (drain.force evicts it)",
        f"{ns}/cache: has emptyDir data, lost with it (drain.delete_emptydir_data evicts it)"], blocked
    assert {(a, "web-1"), (a, "bare"), (a, "cache")} <= s.pods(), "a pod was evicted while others were refused"
    assert s.cordoned(a) and not s.agents[a].records("kernel")
    on_node = wait_until(lambda: node_events(s, a, "NodeDrainBlocked"), "the refusals in the Node's Events")
    assert f"drain for {ns}/kernel blocked: {ns}/bare: declares no controller" in on_node[0]["note"], on_node
    assert f"; {ns}/cache: has emptyDir data" in on_node[0]["note"], on_node
    for name in ("bare", "cache"):  # a person takes them off the node
        s.kube.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}")
    wait_until(lambda: s.done("kernel") == {a, b}, "the rollout done on both nodes")
    assert (a, "web-1") not in s.pods()
    assert [x for x in s.seen(a) if x[0] == "create"] == [("create", a, "kernel", True, ["agent-a"])]


def test_a_drain_leaves_the_replacements_of_pods_that_tolerate_the_cordon(cluster, widgets, make_agent, tmp_path):
    """An operator's pod tolerates the cordon: evicted (it was there when the drain started), its
    controller puts a new one on the cordoned node at once. As `kubectl drain`, the drain waits
    for the pod it evicted, by uid, not for the replacement, and finishes."""
    s = Steps(cluster, widgets, make_agent, tmp_path, DRAIN)
    a, b = s.nodes
    tolerates = {"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                  "effect": "NoSchedule"}]}
    create_pod(s.kube, widgets.namespace, "operator-1", a, {"app": "operator"}, spec=tolerates)
    replaced = []

    def controller():
        """The operator's ReplicaSet: a new pod, on the same node, for each one that went."""
        names = {n for node, n in s.pods() if node == a and n.startswith("operator-")}
        if not names:
            name = f"operator-{len(replaced) + 2}"
            create_pod(s.kube, widgets.namespace, name, a, {"app": "operator"}, spec=tolerates)
            replaced.append(name)
        return False

    s.start()
    widgets.create("kernel", {"version": 1})
    wait_until(lambda: controller() or s.done("kernel") == {a, b}, "the rollout done on both nodes")
    assert replaced == ["operator-2"], replaced
    assert (a, "operator-2") in s.pods(), "the replacement was evicted"
    assert [x for x in s.seen(a) if x[0] == "create"] == [("create", a, "kernel", True, ["agent-a", "operator-2"])]
    drained = s.agents[a].log_events("node drained")
    assert drained and int(drained[0]["evictions"]) == 1, drained


def test_a_drain_never_evicts_a_steward_replica(cluster, widgets, make_agent, tmp_path):
    s = Steps(cluster, widgets, make_agent, tmp_path, DRAIN)
    a, b = s.nodes
    create_pod(s.kube, widgets.namespace, "web-1", a, {"app": "web"})
    create_pod(s.kube, widgets.namespace, "nodehook-steward-1", a, {"nodehook.io/steward": "true"})
    s.start()
    widgets.create("kernel", {"version": 1})
    wait_until(lambda: s.done("kernel") == {a, b}, "the rollout done on both nodes")
    assert (a, "nodehook-steward-1") in s.pods() and (a, "web-1") not in s.pods()
    assert [x for x in s.seen(a) if x[0] == "create"] == [("create", a, "kernel", True, ["agent-a", "nodehook-steward-1"])]


def test_a_stale_mark_left_by_kubectl_uncordon_is_removed_and_never_keeps_a_node_cordoned(cluster, widgets,
                                                                                         make_agent, tmp_path):
    s = Steps(cluster, widgets, make_agent, tmp_path, {"cordon": True})
    a, b = s.nodes
    stale = MARK_PREFIX + "0123456789.abcdefabcdef"
    s.kube.request("PATCH", f"/api/v1/nodes/{a}",
                   {"metadata": {"annotations": {stale: json.dumps({"object": "old/kernel"})}}},
                   "application/merge-patch+json")
    s.start()
    widgets.create("kernel", {"version": 1})
    wait_until(lambda: s.done("kernel") == {a, b}, "the rollout done on both nodes")
    for node in (a, b):
        wait_until(lambda: not s.cordoned(node) and not s.marks(node), f"{node} uncordoned, without marks")
    removed = s.agents[a].log_events("node stale marks removed")
    assert removed and removed[0]["marks"] == stale, removed
    wait_until(lambda: node_events(s, a, "NodeStaleMarksRemoved"), "a NodeStaleMarksRemoved Event on the Node")


def now_ts():
    """Now, as the agents' log lines write it."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def print_figures(case, most, since, moved):
    """The issue's figures for a case, printed (pytest -s shows them): the most nodes cordoned at
    once (max_nodes is 1), and the seconds from `since` (the disruption lifted) to `moved` (the log
    line of the fleet's next move)."""
    print(json.dumps({"case": case, "most_cordoned": most.most if most else None,
                      "fleet_moves_again_seconds": round(seconds_between(since, moved["time"]), 2),
                      "by": moved["event"]}))


class MostCordoned:
    """The most nodes seen cordoned at once, sampled at each call (returns False for wait_until)."""

    def __init__(self, s):
        self.s, self.most = s, 0

    def __call__(self):
        self.most = max(self.most, sum(self.s.cordoned(n) for n in self.s.nodes))
        return False


def annotate(widgets, name, annotations):
    widgets.kube.request("PATCH", f"{widgets.base}/{name}", {"metadata": {"annotations": annotations}},
                         "application/merge-patch+json")


def rollout_status(s, cluster):
    """`kubectl nodehook rollout status` of the widget, as its table's rows by node."""
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    ns = s.widgets.namespace
    done = subprocess.run([str(binary), "fleet", "rollout", "status", "widgets.example.com/kernel", "-n", ns,
                           "--agents-namespace", ns, "--kubeconfig", str(cluster.kubeconfig)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return {line.split()[0]: line for line in done.stdout.splitlines() if line.split() and line.split()[0] in s.nodes}


def test_a_pause_during_a_drain_lets_it_finish_and_starts_no_other_node(cluster, widgets, make_agent, tmp_path):
    """max_nodes 1, a drain held by a budget: the object is paused mid-drain. The drain, the hook and
    the uncordon finish; the other node never starts while paused; never two nodes cordoned."""
    s = blocked_drains(cluster, widgets, make_agent, tmp_path, {"drain": {"timeout_seconds": 600}})
    most = MostCordoned(s)
    first = wait_until(lambda: most() or [n for n, ag in s.agents.items() if ag.log_events("node drain blocked")],
                       "a drain blocked by the budget")[0]
    other = [n for n in s.nodes if n != first][0]
    annotate(widgets, "kernel", {"nodehook.io/rollout-paused": "true"})
    allow(s.kube, widgets.namespace, "db", 1)  # the budget lets the first node's pod go
    wait_until(lambda: most() or first in s.done("kernel"), f"{first} done while paused")
    wait_until(lambda: most() or not s.cordoned(first), f"{first} uncordoned")
    assert not s.agents[first].log_events("rollout slot given up"), "the pause took the slot of work under way"
    assert not s.cordoned(other) and not s.agents[other].records("kernel")
    assert "paused" in rollout_status(s, cluster)[other]
    resumed = now_ts()
    annotate(widgets, "kernel", {"nodehook.io/rollout-paused": None})
    budget = OneAtATime(s, "db", "db")
    wait_until(lambda: most() or budget.step() or s.done("kernel") == set(s.nodes), "the rollout done after the pause")
    assert most.most == 1, f"{most.most} nodes cordoned at once with max_nodes 1"
    print_figures("pause during a drain", most, resumed, s.agents[other].log_events("node cordoned")[0])


def test_stop_nodes_ends_a_drain_under_way_and_gives_its_cordon_back(cluster, widgets, make_agent, tmp_path):
    s = blocked_drains(cluster, widgets, make_agent, tmp_path, {"drain": {"timeout_seconds": 600}})
    most = MostCordoned(s)
    first = wait_until(lambda: most() or [n for n, ag in s.agents.items() if ag.log_events("node drain blocked")],
                       "a drain blocked by the budget")[0]
    assert s.cordoned(first)
    stopped = now_ts()
    annotate(widgets, "kernel", {"nodehook.io/rollout-paused": "stop-nodes"})
    ended = wait_until(lambda: s.agents[first].log_events("node steps ended"), f"{first}'s steps ended")
    assert ended[0]["step"] == "draining" and "stop-nodes" in ended[0]["reason"], ended
    wait_until(lambda: not s.cordoned(first) and not s.marks(first), f"{first} uncordoned, its mark gone")
    wait_until(lambda: s.slot() is None, "the slot given back")
    assert not any(s.cordoned(n) for n in s.nodes) and not any(a.records("kernel") for a in s.agents.values())
    wait_until(lambda: s.events("NodeStepsEnded"), "a NodeStepsEnded Event")
    print_figures("stop-nodes during a drain (to the cordon given back)", None, stopped,
                  s.agents[first].log_events("node steps ended")[0])
    resumed = now_ts()
    annotate(widgets, "kernel", {"nodehook.io/rollout-paused": None})
    budget = OneAtATime(s, "db", "db")
    wait_until(lambda: most() or budget.step() or s.done("kernel") == set(s.nodes), "the rollout done once resumed")
    assert most.most == 1, f"{most.most} nodes cordoned at once with max_nodes 1"
    print_figures("stop-nodes, resumed", most, resumed,
                  min((a.log_events("node cordoned")[-1] for a in s.agents.values()), key=lambda e: e["time"]))


def test_an_agent_away_mid_drain_keeps_its_place_and_no_other_node_starts(cluster, widgets, make_agent, tmp_path):
    """The agent draining node a stops for longer than its slot lease (a DaemonSet update of nodehook
    itself): its slot lapses, its cordon does not, and the coordinator counts it: the other node waits
    (rollout status says why). The agent comes back, goes on with its drain, and the rollout moves."""
    s = blocked_drains(cluster, widgets, make_agent, tmp_path, {"drain": {"timeout_seconds": 600}})
    most = MostCordoned(s)
    first = wait_until(lambda: most() or [n for n, ag in s.agents.items() if ag.log_events("node drain blocked")],
                       "a drain blocked by the budget")[0]
    other = [n for n in s.nodes if n != first][0]
    s.agents[first].stop()
    # Its slot (a 6-s lease) lapses: the other node waits for the node still disrupted, not for a slot.
    status = wait_until(lambda: most() or (lambda rows: rows if "disrupted" in rows.get(other, "") else None)(
        rollout_status(s, cluster)), "the other node waiting for the disrupted one")
    assert f"cordoned by the rollout: {first}" in status[other], status
    assert f"cordoned by the rollout ({widgets.namespace}/kernel), outside any slot" in status[first], status
    assert s.slot() is None or s.slot()["spec"]["holderIdentity"] == first
    back = now_ts()
    s.agents[first].start()
    wait_until(lambda: most() or s.slot() and s.slot()["spec"]["holderIdentity"] == first, f"{first} back in its slot")
    print_figures("agent away mid-drain (to its drain going on)", most, back,
                  wait_until(lambda: s.agents[first].log_events("node drain blocked"), f"{first} draining again")[0])
    budget = OneAtATime(s, "db", "db")
    wait_until(lambda: most() or budget.step() or s.done("kernel") == set(s.nodes), "the rollout done")
    assert most.most == 1, f"{most.most} nodes cordoned at once with max_nodes 1"
    assert not s.agents[first].log_events("node step failed")


def test_an_object_changed_during_a_soak_is_uncordoned_at_the_soaks_end(cluster, widgets, make_agent, tmp_path):
    s = Steps(cluster, widgets, make_agent, tmp_path, {"cordon": True}, policy={"soak_seconds": 4})
    most = MostCordoned(s)
    s.start()
    widgets.create("kernel", {"version": 1})
    first = wait_until(lambda: most() or [n for n, ag in s.agents.items() if ag.log_events("rollout node done")],
                       "a node soaking")[0]
    assert s.cordoned(first)
    changed = now_ts()
    widgets.patch_spec("kernel", {"version": 2})  # during the soak
    ended = wait_until(lambda: s.agents[first].log_events("node steps ended"), "the old state's steps ended")
    assert ended[0]["step"] == "soaking" and "soaked an older state" in ended[0]["reason"], ended
    other = [n for n in s.nodes if n != first][0]
    # Version 2 runs on both: on the first node a second time (its steps start over), on the other
    # for the first time.
    wait_until(lambda: most() or len(s.agents[first].records("kernel")) == 2
               and len(s.agents[other].records("kernel")) == 1 and s.done("kernel") == set(s.nodes),
               "version 2 handled on both nodes", timeout=120)
    for node in s.nodes:
        wait_until(lambda: most() or not s.cordoned(node) and not s.marks(node), f"{node} uncordoned at the end")
    assert most.most == 1, f"{most.most} nodes cordoned at once with max_nodes 1"
    print_figures("object changed during a soak", most, changed,
                  min((a.log_events("node cordoned")[-1] for a in s.agents.values()), key=lambda e: e["time"]))


def test_a_node_that_asked_and_died_is_granted_once_and_asks_again_when_back(cluster, widgets, make_agent,
                                                                             tmp_path):
    """Node a is inside (its verify held); node b asks, then its agent dies for good. When a is done,
    b is granted the slot, never takes it: the grant lapses and is withdrawn (not granted again at
    every lease). b's agent comes back, asks again, and finishes."""
    s = Steps(cluster, widgets, make_agent, tmp_path, {"cordon": True})
    for agent in s.agents.values():
        (agent.control_dir / "hold-verify").write_text("")
    s.start()
    widgets.create("kernel", {"version": 1})
    inside = wait_until(lambda: s.slot() and s.slot()["spec"]["holderIdentity"], "a slot granted")
    asker = [n for n in s.nodes if n != inside][0]
    wait_until(lambda: s.asking(asker), f"{asker}'s ask on its node Lease")
    s.agents[asker].kill()
    (s.agents[inside].control_dir / "hold-verify").unlink()
    wait_until(lambda: inside in s.done("kernel"), f"{inside} done")
    freed = s.agents[inside].log_events("rollout node done")[0]["time"]
    withdrawn = wait_until(lambda: [line for a in s.agents.values() for line in a.log_events("rollout grant withdrawn")],
                           f"the grant to the dead {asker} withdrawn")
    assert withdrawn[0]["node"] == asker, withdrawn
    # The slot free for another node again (here none asks: the fleet is two nodes).
    print_figures("asker killed for good (slot freed to grant withdrawn)", None, freed, withdrawn[0])
    assert not s.cordoned(asker)
    (s.agents[asker].control_dir / "hold-verify").unlink()
    s.agents[asker].start()
    wait_until(lambda: s.done("kernel") == set(s.nodes), f"{asker} done once back")


def test_a_node_someone_else_cordoned_stays_cordoned(cluster, widgets, make_agent, tmp_path):
    s = Steps(cluster, widgets, make_agent, tmp_path, {"cordon": True}, policy={"soak_seconds": 3})
    a, b = s.nodes
    s.kube.request("PATCH", f"/api/v1/nodes/{a}", {"spec": {"unschedulable": True}}, "application/merge-patch+json")
    s.start()
    widgets.create("kernel", {"version": 1})
    wait_until(lambda: s.done("kernel") == {a, b}, "the rollout done on both nodes")
    wait_until(lambda: s.agents[b].log_events("node uncordoned"), "node b uncordoned at the end of its soak")
    assert s.cordoned(a) and not s.marks(a), s.node(a)
    assert not s.cordoned(b) and not s.marks(b)
    assert [x[3] for x in s.seen(b) if x[0] == "create"] == [True]
    # Verify, soak, uncordon: node b's result was written when its soak began, and its cordon
    # given back only near the soak's end (3 s less a margin of 0.75 s), inside its slot.
    done = s.agents[b].log_events("rollout node done")[0]
    uncordoned = s.agents[b].log_events("node uncordoned")[0]
    assert seconds_between(done["time"], uncordoned["time"]) >= 2.2, (done, uncordoned)
    wait_until(lambda: any(a in e["note"] for e in s.events("NodeCordonKept")), "a NodeCordonKept Event naming a")


def test_an_agent_killed_in_the_drain_and_after_the_hook_resumes_each_step_once(cluster, widgets, make_agent,
                                                                               tmp_path):
    s = Steps(cluster, widgets, make_agent, tmp_path, DRAIN)
    a, b = s.nodes
    for node in s.nodes:
        for i in (1, 2):
            create_pod(s.kube, widgets.namespace, f"web-{node[6]}{i}", node, {"app": "web"})
    create_budget(s.kube, widgets.namespace, "web", "web", 1)
    for agent in s.agents.values():
        (agent.control_dir / "hold-verify").write_text("")
    s.start()
    widgets.create("kernel", {"version": 1})
    first = wait_until(lambda: [n for n, ag in s.agents.items() if ag.log_events("node drain blocked")],
                       "a drain blocked by the budget")[0]
    agent = s.agents[first]
    # Kill point 1: in the drain, one pod evicted, one refused.
    agent.kill()
    agent.start()
    allow(s.kube, widgets.namespace, "web", 1)
    # Kill point 2: after the hook, in verify (the hook holds until told).
    wait_until(lambda: [x for x in s.seen(first) if x[0] == "verify"], f"verify running on {first}")
    agent.kill()
    (agent.control_dir / "hold-verify").unlink()
    agent.start()
    wait_until(lambda: first in s.done("kernel"), f"{first} done")
    assert not agent.log_events("node cordoned"), "cordoned again after the restart"
    assert len(agent.records("kernel", "create")) == 1, "the hook ran twice"
    assert not s.cordoned(first) and not s.marks(first)
    other = [n for n in s.nodes if n != first][0]
    (s.agents[other].control_dir / "hold-verify").unlink()
    # The other node, with the disruption controller allowing one more eviction whenever an
    # evicted pod is gone.
    budget = OneAtATime(s, "web", "web")
    wait_until(lambda: budget.step() or s.done("kernel") == {a, b}, "the rollout done on both nodes")
    assert not s.cordoned(other)


def test_a_config_that_drops_the_node_steps_gives_a_drains_cordon_back_at_the_restart(cluster, widgets, make_agent,
                                                                                      tmp_path):
    """An operator stops a drain that cannot finish by taking drain out of the rollout: the agents
    restart with the new config, the cordon of the drain under way is given back, and the rollout
    goes on without steps."""
    s = blocked_drains(cluster, widgets, make_agent, tmp_path,
                       {"drain": {"timeout_seconds": 600}})
    first = wait_until(lambda: [n for n, ag in s.agents.items() if ag.log_events("node drain blocked")],
                       "a drain blocked by the budget")[0]
    assert s.cordoned(first) and s.marks(first)
    for agent in s.agents.values():  # the DaemonSet rolls out the new config
        agent.stop()
        config = json.loads(agent.config_file.read_text())
        del config["resources"][0]["rollout"]["drain"]
        agent.config_file.write_text(json.dumps(config))
        agent.start()
    given = wait_until(lambda: s.agents[first].log_events("node cordon given back"), "the cordon given back")
    assert given[0]["outcome"] == "uncordoned" and given[0]["reason"] == \
        "the resource's rollout no longer has node steps", given
    assert not s.cordoned(first) and not s.marks(first), s.node(first)
    wait_until(lambda: s.done("kernel") == set(s.nodes), "the rollout done on both nodes without steps")
    assert all((n, f"db-{n[6]}") in s.pods() for n in s.nodes), "a pod was evicted without a drain"
    assert [x[3] for x in s.seen() if x[0] == "create"] == [False, False]


def start_rebooting(cluster, widgets, make_agent, tmp_path, steps):
    """Two agents whose hook asks for a reboot, and a widget: returns them and the first node
    that started its reboot."""
    s = Steps(cluster, widgets, make_agent, tmp_path, steps)
    for agent in s.agents.values():
        agent.write_result("kernel", "create", {"reboot": True})
    s.start()
    widgets.create("kernel", {"version": 1})
    first = wait_until(lambda: [n for n, ag in s.agents.items() if ag.log_events("node reboot started")],
                       "a node rebooting")[0]
    return s, first


def reboot(s, node, boot_id):
    """The node reboots: its agent dies, and comes back on a new boot ID the kubelet reports too."""
    agent = s.agents[node]
    agent.kill()
    agent.boot_file.write_text(boot_id + "\n")
    s.set_boot_id(node, boot_id)
    agent.start()


def test_a_reboot_the_hook_asks_for_is_proven_by_the_boot_id_and_the_rollout_goes_on(cluster, widgets, make_agent,
                                                                                    tmp_path):
    steps = {"cordon": True, "reboot": {"argv": [str(HOOKS / "reboot-command")], "timeout_seconds": 60}}
    s, first = start_rebooting(cluster, widgets, make_agent, tmp_path, steps)
    # "node reboot started" is logged just before the command runs: wait for the command's record.
    wait_until(lambda: s.reboot_log.exists() and s.reboot_log.read_text().split() == ["reboot", "boot-1"],
               "the reboot command run once, on boot-1")
    slot = s.slot()
    assert slot["metadata"]["annotations"]["nodehook.io/rollout-phase"] == "rebooting"
    assert slot["spec"]["leaseDurationSeconds"] >= 60
    # A restart without a reboot (same boot ID) is not taken for one, and does not reboot again.
    s.agents[first].kill()
    s.agents[first].start()
    wait_until(lambda: s.agents[first].log_events("rollout slot taken"), "the slot taken back after the restart")
    assert not s.agents[first].log_events("node rebooted")
    reboot(s, first, "boot-2")
    rebooted = wait_until(lambda: s.agents[first].log_events("node rebooted"), "the reboot proven")
    assert rebooted[0]["boot_id"] == "boot-2" and rebooted[0]["node_boot_id"] == "boot-2"
    other = [n for n in s.nodes if n != first][0]
    # As for the first node: the command's record, not the line logged just before it runs.
    wait_until(lambda: len(s.reboot_log.read_text().split()) == 4, "the reboot command run on the other node")
    reboot(s, other, "boot-2")
    wait_until(lambda: s.done("kernel") == set(s.nodes), "the rollout done on both nodes")
    for node in s.nodes:
        assert len(s.agents[node].records("kernel", "create")) == 1, "the hook ran again after the reboot"
        assert not s.cordoned(node)
    assert len(s.reboot_log.read_text().splitlines()) == 2
    wait_until(lambda: s.events("NodeRebooted"), "a NodeRebooted Event")


def test_a_reboot_that_never_happens_fails_the_node(cluster, widgets, make_agent, tmp_path):
    steps = {"cordon": True, "on_failure": "uncordon",
             "reboot": {"argv": [str(HOOKS / "reboot-command")], "timeout_seconds": 10}}
    s, first = start_rebooting(cluster, widgets, make_agent, tmp_path, steps)
    failed = wait_until(lambda: s.agents[first].log_events("node step failed"), "the reboot timing out", timeout=60)
    assert failed[0]["error"] == "no reboot within 10.0s: the boot ID is still boot-1", failed
    # on_failure: uncordon (done just after "node step failed" is logged)
    wait_until(lambda: not s.cordoned(first) and not s.marks(first), f"{first} uncordoned")
    other = [n for n in s.nodes if n != first][0]
    wait_until(lambda: s.events("RolloutHalted"), "the rollout halted")
    assert not s.cordoned(other) and not s.agents[other].records("kernel")


def test_an_uninstall_gives_back_the_cordon_of_a_drain_under_way_and_keeps_a_failed_nodes(cluster, widgets,
                                                                                        make_agent, tmp_path):
    """Both nodes inside at once, both drains blocked by a budget: a's times out (kept cordoned,
    its mark says it failed), b's is still going on when the agents are stopped. The uninstall
    (`nodehook fleet release-finalizers`) gives b back, keeps a for a person, and gives a back with
    --uncordon-failed."""
    never = {"drain": {"timeout_seconds": 4}}
    s = blocked_drains(cluster, widgets, make_agent, tmp_path, never, policy={"max_nodes": 2},
                       second_steps={"drain": {"timeout_seconds": 600}})
    a, b = s.nodes
    wait_until(lambda: s.agents[a].log_events("node kept cordoned"), "node a failing its drain")
    wait_until(lambda: s.agents[b].log_events("node drain blocked"), "node b draining")
    (mark_a,), (mark_b,) = s.marks(a).values(), s.marks(b).values()
    assert json.loads(mark_a)["failed"].startswith("drain timed out after 4.0s"), mark_a
    assert "failed" not in json.loads(mark_b) and json.loads(mark_b)["object"] == f"{widgets.namespace}/kernel"
    for agent in s.agents.values():
        agent.stop()  # mid-drain on b: a restart would go on draining, so the cordon stays
    assert s.cordoned(a) and s.cordoned(b)

    def release(*extra):
        binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
        done = subprocess.run([str(binary), "fleet", "release-finalizers", "--config",
                               str(s.agents[b].config_file), "--yes", "--kubeconfig", str(cluster.kubeconfig), *extra],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    out = release()
    assert not s.cordoned(b) and not s.marks(b), s.node(b)
    assert s.cordoned(a) and list(s.marks(a).values()) == [mark_a], s.node(a)
    assert f"{b}: uncordoned ({widgets.namespace}/kernel, state " in out, out
    assert f"{a}: kept cordoned for a person to look at" in out and "--uncordon-failed" in out, out
    assert "gave back 1 of 2 node cordons (1 uncordoned); kept 1 of failed nodes" in out, out
    out = release("--uncordon-failed")
    assert not s.cordoned(a) and not s.marks(a), s.node(a)
    assert f"{a}: uncordoned" in out and "gave back 1 of 1 node cordon (1 uncordoned)" in out, out
