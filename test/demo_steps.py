"""Drives the demo (test/demo.sh): starts the agents for node-a and node-b, then walks through what
nodehook does, printing each kubectl command before running it (with the demo's kubeconfig, so the
same commands work in another terminal). With --non-interactive it stops after the walkthrough;
otherwise it keeps the agents running until Ctrl-C.

usage: demo_steps.py --kubeconfig FILE --demo DIR --nodehook BIN --bin DIR [--non-interactive]
"""

import argparse
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "e2e"))
from kube import ApiError, Kube  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
NODES = ("node-a", "node-b")
AGENT_NAMESPACE = "nodehook"  # where `kubectl nodehook` looks for agent pods (deploy/base)
PORT = 8090


def step(title):
    print(f"\n\033[1m== {title}\033[0m", flush=True)


class Demo:
    def __init__(self, args):
        self.demo = Path(args.demo)
        self.kubeconfig = args.kubeconfig
        self.nodehook = args.nodehook
        self.env = dict(os.environ, KUBECONFIG=args.kubeconfig, PATH=f"{args.bin}:{os.environ['PATH']}")
        self.kube = Kube(args.kubeconfig)
        self.agents = {}
        self.addresses = {}
        self.pods = []
        self.agent_kubeconfigs = {}  # node -> a kubeconfig with its pod-bound token
        self.steward = None  # (process, log prefix)

    # -- kubectl, shown then run
    def kubectl(self, *args, stdin=None, quiet=False):
        """Runs kubectl; shows the command and its output unless `quiet` (for polling)."""
        if not quiet:
            print(f"$ kubectl {' '.join(shlex.quote(a) for a in args)}", flush=True)
        done = subprocess.run(["kubectl", *args], env=self.env, input=stdin, capture_output=True, text=True,
                              timeout=120)
        if not quiet:
            sys.stdout.write(done.stdout)
        if done.returncode != 0 and not quiet:
            sys.stdout.write(done.stderr)
        sys.stdout.flush()
        return done.stdout

    def apply(self, name, spec):
        manifest = self.demo / f"{name}.yaml"
        manifest.write_text(json.dumps({"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": name, "namespace": "demo"}, "spec": spec}, indent=2))
        self.kubectl("apply", "-f", str(manifest))

    # -- agents
    def pod_addresses(self):
        """Two 10.250.N.x/32 addresses on lo, so the API server's pod proxy (which refuses loopback)
        reaches the agents: what `kubectl nodehook` needs. Root only; else kubectl nodehook is skipped."""
        if os.geteuid() != 0:
            return {}
        for n in random.sample(range(1, 255), 254):
            if subprocess.run(["ip", "-4", "addr", "show", "to", f"10.250.{n}.0/24"], capture_output=True,
                              text=True).stdout.strip():
                continue
            addresses = {node: f"10.250.{n}.{i + 1}" for i, node in enumerate(NODES)}
            for address in addresses.values():
                subprocess.run(["ip", "addr", "add", f"{address}/32", "dev", "lo"], check=True)
            return addresses
        return {}

    def agent_pod(self, node, ip):
        """The Pod object the DaemonSet would have made on `node` (the test server has no kubelet),
        under the agents' ServiceAccount; its address when the pod proxy can reach the agent."""
        name = f"nodehook-{node}"
        pod = self.kube.request("POST", f"/api/v1/namespaces/{AGENT_NAMESPACE}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "nodehook"}},
            "spec": {"nodeName": node, "serviceAccountName": "nodehook", "automountServiceAccountToken": False,
                     "containers": [{"name": "nodehook", "image": "nodehook:0.1.0",
                                     "ports": [{"name": "health", "containerPort": PORT}]}]}})
        if ip:
            self.kube.request("PATCH", f"/api/v1/namespaces/{AGENT_NAMESPACE}/pods/{name}/status",
                              {"status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}},
                              "application/merge-patch+json")
        self.pods.append(name)
        return pod

    def confine(self):
        """As on a real cluster: the agents' ServiceAccount with the roles and the node-bound rules
        `nodehook rbac` prints for the config (docs/security.md), applied with kubectl; each agent then
        runs with a token bound to its pod on its node, as the kubelet would give it."""
        for account in ("nodehook", "nodehook-steward"):
            self.kube.request("POST", f"/api/v1/namespaces/{AGENT_NAMESPACE}/serviceaccounts",
                              {"metadata": {"name": account}})
        rbac = self.demo / "rbac.yaml"
        rbac.write_text(subprocess.run([self.nodehook, "rbac", "--config", str(self.demo / "config.json")],
                                       capture_output=True, text=True, check=True).stdout)
        self.kubectl("apply", "-n", AGENT_NAMESPACE, "-f", str(rbac))
        self.kube.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "metadata": {"name": "nodehook"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "nodehook"},
            "subjects": [{"kind": "ServiceAccount", "name": "nodehook", "namespace": AGENT_NAMESPACE}]})
        # The agents' Lease Role (their ready records), bound as deploy/base binds its Roles.
        self.kube.request("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{AGENT_NAMESPACE}/rolebindings", {
            "metadata": {"name": "nodehook-rollout"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "nodehook-rollout"},
            "subjects": [{"kind": "ServiceAccount", "name": "nodehook", "namespace": AGENT_NAMESPACE}]})
        for node in NODES:
            self.kube.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
            pod = self.agent_pod(node, self.addresses.get(node))
            token = self.kube.request("POST", f"/api/v1/namespaces/{AGENT_NAMESPACE}/serviceaccounts/nodehook/token", {
                "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": 86400, "boundObjectRef": {
                    "apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}}})
            config = self.demo / f"{node}.kubeconfig"
            text = re.sub(r"^(\s*token:\s*).*$", lambda m: m.group(1) + token["status"]["token"],
                          Path(self.kubeconfig).read_text(), flags=re.M)
            config.write_text(text)
            config.chmod(0o600)
            self.agent_kubeconfigs[node] = str(config)
        # The steward: the work that crosses nodes (here, each widget's Ready condition from every
        # node's record), under its own account with the roles `nodehook rbac` printed for it.
        token = self.kube.request("POST", f"/api/v1/namespaces/{AGENT_NAMESPACE}/serviceaccounts/nodehook-steward/token",
                                  {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                   "spec": {"expirationSeconds": 86400}})
        steward_kubeconfig = self.demo / "steward.kubeconfig"
        steward_kubeconfig.write_text(re.sub(r"^(\s*token:\s*).*$", lambda m: m.group(1) + token["status"]["token"],
                                             Path(self.kubeconfig).read_text(), flags=re.M))
        steward_kubeconfig.chmod(0o600)
        config = json.loads((self.demo / "config.json").read_text())
        config["api"] = {"kubeconfig": str(steward_kubeconfig)}
        (self.demo / "steward.json").write_text(json.dumps(config, indent=2))
        # The API server loads new admission policies a moment after they are written.
        self.wait_until("the node-bound rules to be in force", self.rules_in_force)

    def rules_in_force(self):
        probe = Kube(self.agent_kubeconfigs["node-a"])
        try:
            probe.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events?dryRun=All", {
                "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"generateName": "probe-"},
                "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "nodehook.io/agent",
                "reportingInstance": "node-b", "action": "probe", "reason": "Probe", "type": "Normal",
                "regarding": {"apiVersion": "v1", "kind": "Node", "name": "node-b"}})
            return False
        except ApiError as e:
            return e.status == 403

    def start_agent(self, node):
        state = self.demo / node
        state.mkdir(mode=0o700, exist_ok=True)  # the state holds whole objects: private, as the agent wants it
        health = f"{self.addresses[node]}:{PORT}" if node in self.addresses else "127.0.0.1:0"
        # The agent's log, shown with a [node] prefix and kept in NODE-agent.log. In a session of
        # its own, like the agent: Ctrl-C must not cut the agent's log while it shuts down.
        log = shlex.quote(str(self.demo / f"{node}-agent.log"))
        prefix = subprocess.Popen(["sh", "-c", f"tee -a {log} | sed -u 's/^/[{node}] /'"], stdin=subprocess.PIPE,
                                  stdout=sys.stdout, start_new_session=True)
        proc = subprocess.Popen(
            [self.nodehook, "run", "--config", str(self.demo / "config.json"), "--node-name", node,
             "--kubeconfig", self.agent_kubeconfigs[node], "--state-file", str(state / "state.db"),
             "--health-address", health, "--admin-address", "127.0.0.1:0", "--in-progress-delay-seconds", "2",
             "--retry-max-seconds", "4"],
            env=dict(os.environ, WIDGET_LOG=str(self.demo / f"{node}.log")), stdout=prefix.stdin,
            stderr=prefix.stdin, start_new_session=True)
        self.agents[node] = (proc, prefix)

    def start_steward(self):
        log = shlex.quote(str(self.demo / "steward.log"))
        prefix = subprocess.Popen(["sh", "-c", f"tee -a {log} | sed -u 's/^/[steward] /'"], stdin=subprocess.PIPE,
                                  stdout=sys.stdout, start_new_session=True)
        proc = subprocess.Popen([self.nodehook, "steward", "--config", str(self.demo / "steward.json"),
                                 "--identity", "steward-1", "--health-address", "127.0.0.1:0"],
                                stdout=prefix.stdin, stderr=prefix.stdin, start_new_session=True)
        self.steward = (proc, prefix)

    def stop_agent(self, node, sig=signal.SIGTERM):
        proc, prefix = self.agents.pop(node)
        proc.send_signal(sig)
        proc.wait(timeout=60)
        prefix.stdin.close()
        prefix.wait(timeout=10)

    # -- what the hooks recorded
    def records(self, node):
        log = self.demo / f"{node}.log"
        return log.read_text().splitlines() if log.exists() else []

    def wait_for_record(self, record, nodes=NODES, timeout=60):
        """Waits until each node's hook recorded "REASON NODE demo/NAME" for `record` ("REASON NAME")."""
        reason, name = record.split()
        deadline = time.monotonic() + timeout
        pending = set(nodes)
        while pending and time.monotonic() < deadline:
            pending = {n for n in pending if f"{reason} {n} demo/{name}" not in self.records(n)}
            time.sleep(0.1)
        for node in nodes:
            print(f"   {node}: {reason} demo/{name} {'missing!' if node in pending else 'done'}", flush=True)
        if pending:
            raise SystemExit(f"demo: {record} did not run on {', '.join(sorted(pending))}")

    def wait_until(self, what, predicate, timeout=60):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise SystemExit(f"demo: timed out waiting for {what}")
            time.sleep(0.1)

    def settled(self, node):
        """True once `node`'s state (its /v1/objects snapshot, read from the store) has every object
        handled and nothing pending: what it has done is on disk, so a kill loses none of it."""
        listening = [l for l in self.agent_log(node).splitlines() if 'event="health endpoints listening"' in l]
        address = re.search(r"bound=(\S+)", listening[-1]).group(1) if listening else ""
        try:
            with urllib.request.urlopen(f"http://{address}/v1/objects", timeout=5) as answer:
                objects = json.loads(answer.read())["objects"]
        except (OSError, ValueError):
            return False
        return bool(objects) and all(o["handled"] and not o["handlers"] for o in objects)

    def agent_log(self, node):
        return (self.demo / f"{node}-agent.log").read_text() if (self.demo / f"{node}-agent.log").exists() else ""

    # -- the walkthrough
    def start(self):
        self.addresses = self.pod_addresses()
        self.kube.request("POST", "/api/v1/namespaces", {"metadata": {"name": AGENT_NAMESPACE}})
        step("each agent confined to its node: its pod-bound token, the roles and rules `nodehook rbac` prints")
        self.confine()
        for node in NODES:
            where = f"http://{self.addresses[node]}:{PORT}" if node in self.addresses else "a free loopback port"
            step(f"starting the agent for {node} (health and metrics on {where})")
            self.start_agent(node)
        step("starting the steward: it keeps each widget's Ready condition from the nodes' records")
        self.start_steward()

    def walkthrough(self):
        step("every command below works in another terminal too, after:")
        print(f"export KUBECONFIG={self.kubeconfig} PATH={self.env['PATH'].split(':')[0]}:$PATH")
        step("the example widgets alpha and beta: each node runs its create hook")
        self.kubectl("get", "widgets", "-n", "demo")
        for name in ("alpha", "beta"):
            self.wait_for_record(f"create {name}")

        step("a status-only change: no hook runs")
        self.kubectl("patch", "widget", "alpha", "-n", "demo", "--subresource=status", "--type=merge",
                     "-p", '{"status":{"phase":"Shiny"}}')
        step("a spec change: each node runs the update hook")
        self.kubectl("patch", "widget", "alpha", "-n", "demo", "--type=merge", "-p", '{"spec":{"size":2}}')
        self.wait_for_record("update alpha")

        if self.addresses:
            step("the whole fleet: every node's progress, asked of each agent through the API server")
            # Each agent's answer is a snapshot up to about 2 s old: wait for one that has alpha.
            self.wait_until("the fleet view", lambda: "demo/alpha" in self.kubectl("nodehook", quiet=True))
            self.kubectl("nodehook")

        step("a hook that fails: its first 4 attempts fail on purpose (spec.failUntilRetry)")
        self.apply("flaky", {"size": 1, "failUntilRetry": 4})
        self.wait_until("flaky's first failure", lambda: all('object=demo/flaky' in self.agent_log(n)
                                                               and 'event="hook failed"' in self.agent_log(n)
                                                               for n in NODES))
        if self.addresses:
            self.wait_until("the failing view", lambda: "demo/flaky" in self.kubectl("nodehook", "failing", quiet=True))
            self.kubectl("nodehook", "failing")
        self.wait_until("the Warning Event", lambda: "HandlerFailing" in self.kubectl(
            "get", "events", "-n", "demo", "--field-selector", "involvedObject.name=flaky", quiet=True))
        self.kubectl("describe", "widget", "flaky", "-n", "demo")
        print("...retried with backoff (1 s, 2 s, 4 s) until it succeeds:", flush=True)
        self.wait_for_record("create flaky")
        self.wait_until("the recovery Events", lambda: self.kubectl(
            "get", "events", "-n", "demo", "--field-selector", "involvedObject.name=flaky,reason=HandlerRecovered",
            "-o", "name", quiet=True).count("\n") >= len(NODES))
        self.kubectl("get", "events", "-n", "demo", "--field-selector", "involvedObject.name=flaky",
                     "--sort-by=.metadata.creationTimestamp")

        step("an agent killed (SIGKILL) while widgets change: on restart it catches up, and reruns nothing")
        self.wait_until("node-b to have stored all it did", lambda: self.settled("node-b"))
        before = len(self.records("node-b"))
        self.stop_agent("node-b", signal.SIGKILL)
        print("node-b killed")
        self.kubectl("patch", "widget", "alpha", "-n", "demo", "--type=merge", "-p", '{"spec":{"size":3}}')
        self.apply("delta", {"size": 4})
        self.wait_for_record("update alpha", nodes=("node-a",))
        self.start_agent("node-b")
        print("node-b restarted")
        self.wait_for_record("create delta", nodes=("node-b",))
        self.wait_until("node-b's update of alpha", lambda: self.records("node-b")[before:].count("update node-b demo/alpha") == 1)
        ran = self.records("node-b")[before:]
        print(f"   node-b ran after its restart: {', '.join(ran)} (and nothing it had handled before)")
        if sorted(ran) != ["create node-b demo/delta", "update node-b demo/alpha"]:
            raise SystemExit(f"demo: node-b ran {ran} after its restart")

        step("results the cluster can act on: each node's WidgetsReady condition, and a label the hook publishes")
        self.apply("painter", {"size": 1, "nodeLabel": "blue"})
        label = "widgets.example.com/painter"
        self.wait_until("the label on every node", lambda: all(
            self.kube.request("GET", f"/api/v1/nodes/{n}")["metadata"].get("labels", {}).get(label) == "blue"
            for n in NODES))
        self.wait_until("WidgetsReady True on every node", lambda: all(
            any(c["type"] == "WidgetsReady" and c["status"] == "True"
                for c in self.kube.request("GET", f"/api/v1/nodes/{n}")["status"].get("conditions", []))
            for n in NODES))
        self.kubectl("get", "nodes", "-o",
                     "custom-columns=NODE:.metadata.name,WIDGETS_READY:.status.conditions[?(@.type=='WidgetsReady')]"
                     ".status,PAINTER:.metadata.labels.widgets\\.example\\.com/painter")
        step("kubectl wait: a widget is Ready once every node handled its current state")
        self.kubectl("patch", "widget", "painter", "-n", "demo", "--type=merge", "-p", '{"spec":{"size":2}}')
        self.kubectl("wait", "--for=condition=Ready", "widget/painter", "-n", "demo", "--timeout=60s")
        self.kubectl("get", "widget", "painter", "-n", "demo", "-o",
                     "custom-columns=NAME:.metadata.name,GENERATION:.metadata.generation,"
                     "READY:.status.conditions[?(@.type=='Ready')].status,"
                     "OBSERVED:.status.conditions[?(@.type=='Ready')].observedGeneration,"
                     "MESSAGE:.status.conditions[?(@.type=='Ready')].message")
        self.kubectl("delete", "widget", "painter", "-n", "demo")
        self.wait_until("the label gone after the delete hook", lambda: not any(
            label in self.kube.request("GET", f"/api/v1/nodes/{n}")["metadata"].get("labels", {}) for n in NODES))
        self.kubectl("get", "nodes", "-L", label)

        step("a multi-step delete: the hook reports \"in progress\" twice (exit 100), then finishes")
        self.kubectl("patch", "widget", "beta", "-n", "demo", "--type=merge", "-p", '{"spec":{"deleteSteps":2}}')
        self.wait_for_record("update beta")
        self.kubectl("delete", "widget", "beta", "-n", "demo")
        self.wait_for_record("delete beta")
        for node in NODES:
            steps = [line for line in self.agent_log(node).splitlines()
                     if "object=demo/beta" in line and "handler=delete" in line
                     and ('event="hook in progress"' in line or 'event="hook succeeded"' in line)]
            print(f"   {node}: " + ", then ".join("in progress" if "in progress" in s else "done" for s in steps))

    def tell_what_to_try(self):
        step("running; Ctrl-C stops the agents and the API server")
        print(f"export KUBECONFIG={self.kubeconfig} PATH={self.env['PATH'].split(':')[0]}:$PATH\n"
              "kubectl patch widget alpha -n demo --type=merge -p '{\"spec\":{\"size\":7}}'\n"
              "kubectl apply -f " + str(self.demo / "flaky.yaml") + "\n"
              "kubectl delete widget delta -n demo\n"
              + ("kubectl nodehook\nkubectl nodehook failing\n" if self.addresses else "")
              + f"tail -f {self.demo}/node-a.log", flush=True)

    def stop(self):
        for node in list(self.agents):
            self.stop_agent(node)
        if self.steward:
            proc, prefix = self.steward
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            prefix.stdin.close()
            prefix.wait(timeout=10)
        for name in self.pods:
            try:
                self.kube.request("DELETE", f"/api/v1/namespaces/{AGENT_NAMESPACE}/pods/{name}?gracePeriodSeconds=0")
            except (ApiError, OSError):
                pass  # the API server may already be stopping (Ctrl-C reaches it too)
        for address in self.addresses.values():
            subprocess.run(["ip", "addr", "del", f"{address}/32", "dev", "lo"], check=False)


def stop_on_signal(signum, frame):
    """SIGTERM stops the demo as Ctrl-C does: the agents are stopped, not left running."""
    raise KeyboardInterrupt


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--kubeconfig", "--demo", "--nodehook", "--bin"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--non-interactive", action="store_true")
    args = parser.parse_args()
    # Ctrl-C reaches the whole process group; the agents run in sessions of their own and are
    # stopped here, with SIGTERM, in order. The handlers are set whatever this process inherited:
    # a shell's background job starts with SIGINT ignored, and Python then never raises
    # KeyboardInterrupt, so the demo would pause for ever and leave the agents running.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, stop_on_signal)
    demo = Demo(args)
    try:
        demo.start()
        demo.walkthrough()
        if not args.non_interactive:
            demo.tell_what_to_try()
            signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        demo.stop()


if __name__ == "__main__":
    main()
