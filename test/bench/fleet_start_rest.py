#!/usr/bin/env python3
"""The fleet at start and at rest (issue 43, item 3): N agents, every writer of the agent's
at-rest traffic switched on, against ONE test API server; modelled to 5,000 nodes.

Each agent (test/bench/fleet_nodes.py: its own node name, state file and health port; a Node
object of that name exists) watches three resources, so every kind of write an agent makes
when nothing changes is in the figures:
  - `fleet/widgets` (--objects of them): a create hook, the `Ready` condition on each object
    (each node's ready record Lease, the writer's election and its renewals) and a node condition
    on the agent's Node;
  - `rollout/widgets` (2): a rollout policy (each node's node Lease, the coordinator's election
    and renewals);
  - `single/widgets` (1): a singleton resource (the leader's Lease and its renewals).
Phases, per fleet size:
  install  the agents start on empty state files and handle everything (figures kept for reference);
  start    every agent stops (SIGTERM), then all start again at the same moment on their state
           files (a DaemonSet rollout without maxUnavailable's pacing: the worst case): the time
           until every agent's /readyz answers 200, and what the API server did from the start
           until every agent was ready plus --settle seconds (late writes count);
  rest     --rest seconds of nothing, scaled to an hour.
What the API server did comes from its own /metrics (apiserver_request_total by verb, resource and
code; apiserver_response_sizes and apiserver_watch_events_sizes for bytes; 429s) and its CPU from
/proc (etcd is in the same process). The driver's own requests in a window are one GET of
/metrics; nothing else reads the API server while a window is open. The model fits a + b·N to
the sizes measured and evaluates it at 5,000.

  test/bench/fleet_start_rest.py                      # 50, 100 and 300 agents, 1,000 objects, 600 s rest
  test/bench/fleet_start_rest.py --agents 50 --rest 120
  test/bench/fleet_start_rest.py --smoke              # 5 agents, 50 objects, 20 s rest: fails only when broken

Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER (or the default build paths). Exit 1 when an agent
never gets ready or the fleet never settles; the figures never fail a run."""

import argparse
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fleet_apiserver import ApiServer
from fleet_nodes import Fleet
from fleet_probe import parse_prometheus
from fleet_rollout import binary, done_count, fleet_args, wait
import fleet_start_rest_report as report

LEASE_NS = "nodehook-fleet"
PLAIN_NS, ROLLOUT_NS, SINGLE_NS = "fleet", "rollout", "single"
ROLLOUT_OBJECTS = 2
WRITE_VERBS = ("POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", default="50,100,300", help="fleet sizes, comma-separated")
    p.add_argument("--objects", type=int, default=1000, help="widgets with a ready condition every agent handles")
    p.add_argument("--rest", type=float, default=600.0, help="seconds of rest measured")
    p.add_argument("--settle", type=float, default=20.0, help="seconds after the last agent is ready still counted as start")
    return fleet_args(p, argv, {"agents": "5", "objects": 50, "rest": 20.0, "settle": 5.0},
                      "5 agents, 50 objects, 20 s rest", 1800.0, "seconds the fleet may take to get ready or settle")


def snapshot(server):
    """The API server's cumulative figures: requests by (verb, resource, code), response and watch
    bytes by resource, its CPU seconds; one GET of /metrics."""
    samples = parse_prometheus(server.writer.request("GET", "/metrics", raw=True))
    snap = {"cpu": server.cpu_total(), "requests": {}, "response bytes": {}, "watch bytes": {}, "watch events": {}}
    for (name, labels), value in samples.items():
        d = dict(labels)
        if name == "apiserver_request_total":
            # A dry run (the agents' node-isolation check) is a request, but stores nothing.
            verb = d.get("verb", "") + ("(dry-run)" if d.get("dry_run") else "")
            key = f"{verb} {d.get('resource') or '(non-resource)'} {d.get('code', '')}"
            snap["requests"][key] = snap["requests"].get(key, 0.0) + value
        elif name == "apiserver_response_sizes_sum":
            key = d.get("resource") or "(non-resource)"
            snap["response bytes"][key] = snap["response bytes"].get(key, 0.0) + value
        elif name in ("apiserver_watch_events_sizes_sum", "apiserver_watch_events_sizes_count"):
            table = "watch bytes" if name.endswith("_sum") else "watch events"
            snap[table][d.get("resource", "")] = snap[table].get(d.get("resource", ""), 0.0) + value
    return snap


def difference(before, after, seconds):
    """What happened between two snapshots: requests by "VERB resource", 429s, writes (dry runs
    not counted), bytes."""
    requests, too_many = {}, 0.0
    for key, value in after["requests"].items():
        delta = value - before["requests"].get(key, 0.0)
        verb, resource, code = key.split(" ")
        if resource == "(non-resource)" and verb == "GET":
            continue  # the driver's GET of /metrics (agents make no non-resource request after start)
        if delta:
            requests[f"{verb} {resource}"] = requests.get(f"{verb} {resource}", 0.0) + delta
            too_many += delta if code == "429" else 0.0

    def delta_of(table):
        return sum(after[table].values()) - sum(before[table].values())
    return {"seconds": seconds, "apiserver_cpu_s": after["cpu"] - before["cpu"], "requests": requests,
            "writes": sum(v for k, v in requests.items() if k.split(" ")[0] in WRITE_VERBS),
            "http_429": too_many, "response_bytes": delta_of("response bytes"),
            "watch_bytes": delta_of("watch bytes"), "watch_events": delta_of("watch events")}


def agent_config(agent, objects_hook):
    """Rewrites the agent's config: the three resources above."""
    config = json.loads(agent.config_file.read_text())
    base = {"group": "example.com", "version": "v1", "plural": "widgets"}
    hook = {"argv": [objects_hook], "timeout_seconds": 30}
    config["resources"] = [
        {**base, "namespace": PLAIN_NS, "hooks": {"create": hook, "update": hook},
         "ready_condition": "Ready", "node_outputs": {"condition": "FleetWidgetsReady"}},
        {**base, "namespace": ROLLOUT_NS, "hooks": {"create": hook}, "rollout": {"max_nodes": "10%"}},
        {**base, "namespace": SINGLE_NS, "hooks": {"create": hook}, "singleton": True},
    ]
    agent.config_file.write_text(json.dumps(config, indent=2))


def create_world(server, nodes, objects, pool):
    w = server.writer
    for ns in (LEASE_NS, PLAIN_NS, ROLLOUT_NS, SINGLE_NS):
        w.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    list(pool.map(lambda n: w.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                                                 "metadata": {"name": n}}), nodes))

    def widget(ns, name, i):
        w.request("POST", w.widgets(ns), {"apiVersion": "example.com/v1", "kind": "Widget",
                                          "metadata": {"name": name}, "spec": {"size": i}})
    todo = [(PLAIN_NS, f"w{i:05d}", i) for i in range(objects)]
    todo += [(ROLLOUT_NS, f"roll-{i}", i) for i in range(ROLLOUT_OBJECTS)] + [(SINGLE_NS, "single", 0)]
    list(pool.map(lambda t: widget(*t), todo))


def unsettled(server, fleet, objects):
    """What is not settled yet ("" when nothing): every widget Ready, every node done with the
    rollout's objects, the singleton's object handled by its leader. Reads the API server: only
    outside measured windows."""
    w = server.writer
    plain = w.request("GET", w.widgets(PLAIN_NS)).get("items", [])
    ready = sum(1 for o in plain if any(c.get("type") == "Ready" and c.get("status") == "True"
                                        for c in o.get("status", {}).get("conditions", [])))
    rolled = w.request("GET", w.widgets(ROLLOUT_NS)).get("items", [])
    single = w.request("GET", f"{w.widgets(SINGLE_NS)}/single")
    done = done_count(server, [o["metadata"]["uid"] for o in rolled])
    missing = []
    if ready != objects or len(plain) != objects:
        missing.append(f"{ready} of {objects} widgets Ready ({len(plain)} listed)")
    if done != len(fleet.agents) * ROLLOUT_OBJECTS:
        missing.append(f"{done} of {len(fleet.agents) * ROLLOUT_OBJECTS} rollout results")
    if "nodehook.io/singleton" not in single["metadata"].get("finalizers", []):
        missing.append("the singleton's finalizer")
    return "; ".join(missing)


def deletes_handled(fleet):
    """Log lines of any agent's delete handling: nothing is deleted in this bench, so each is a
    live object taken for deleted (as when one resource's entries took each other's objects)."""
    lines = []
    for agent in fleet.agents:
        for log in sorted(agent.dir.glob("agent-*.log")):
            lines += [f"{agent.node}: {line}" for line in log.read_text(errors="replace").splitlines()
                      if " handler=delete " in line]
    return lines


def settled(server, fleet, objects):
    return not unsettled(server, fleet, objects)


def one_size(args, n, work):
    (work / "apiserver").mkdir(parents=True)
    server = ApiServer(work / "apiserver")
    fleet, pool = None, ThreadPoolExecutor(8)
    try:
        fleet = Fleet(n, work / "nodes", server.kubeconfig, binary(), (), False, "streaming", "info",
                      tuning={"lease_namespace": LEASE_NS})
        for agent in fleet.agents:
            agent_config(agent, "/bin/true")
        create_world(server, [a.node for a in fleet.agents], args.objects, pool)
        figures = {"agents": n, "objects": args.objects}

        before, t0 = snapshot(server), time.time()
        fleet.start()
        fleet.wait(lambda a: a.ready(), "got ready on a fresh state file", args.timeout)
        wait(lambda: settled(server, fleet, args.objects), "the fleet to settle after install", args.timeout, 2.0)
        figures["install"] = difference(before, snapshot(server), time.time() - t0)

        fleet.each(lambda a: a.stop())
        agents0 = fleet.requests_by_verb()
        before, t0 = snapshot(server), time.time()
        fleet.start()
        ready = fleet.wait(lambda a: a.ready(), "got ready again", args.timeout)
        time.sleep(args.settle)  # the window stays open so writes right after readiness count as start
        figures["start"] = difference(before, snapshot(server), time.time() - t0)
        # The server counts a watch when it ends; the agents count the ones they opened.
        figures["start"]["agent_requests"] = {v: n - agents0.get(v, 0.0) for v, n in fleet.requests_by_verb().items()}
        times = sorted(t - t0 for t in ready.values())
        figures["start"].update({"all_ready_s": times[-1], "median_ready_s": times[len(times) // 2],
                                 "agents_exited": len(fleet.dead())})

        cpu0, before, t0 = fleet.cpu_total(), snapshot(server), time.time()
        time.sleep(args.rest)  # the measured quiet period
        figures["rest"] = difference(before, snapshot(server), time.time() - t0)
        figures["rest"].update({"agents_cpu_s": fleet.cpu_total() - cpu0, "agents_rss_mib": fleet.rss_total_kib() / 1024,
                                "apiserver_rss_mib": server.rss_kib() / 1024})
        if fleet.dead():
            raise RuntimeError(f"{len(fleet.dead())} agent(s) exited during the run")
        deleted = deletes_handled(fleet)
        if deleted:
            raise RuntimeError(f"{len(deleted)} delete(s) handled, but nothing was deleted; the first: {deleted[0]}")
        missing = unsettled(server, fleet, args.objects)
        if missing:
            raise RuntimeError(f"the fleet no longer shows every object handled after rest: {missing}")
        return figures
    finally:
        if fleet:
            fleet.stop()
        server.stop()
        pool.shutdown()


def main(argv):
    args = parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="nodehook-fleet-start-rest-"))
    rows, code = [], 0
    try:
        for n in args.sizes:
            print(f"fleet_start_rest: {n} agents, {args.objects} objects ...", flush=True)
            rows.append(one_size(args, n, root / f"n{n}"))
            print("  " + json.dumps(rows[-1]), flush=True)
    except RuntimeError as e:
        print(f"fleet_start_rest: {e} (work directory {root})", file=sys.stderr)
        args.keep, code = True, 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if rows:
        print(report.markdown(rows, args))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
