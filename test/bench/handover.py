#!/usr/bin/env python3
"""Leader handover times of cluster-singleton handlers: three agents against the real API server,
the Lease knobs at client-go's defaults (15 s duration, 10 s renew deadline, 2 s retry period)
unless given. A feeder creates a widget every 0.5 s so singleton hooks keep running. Each round
ends the leader and measures, on CLOCK_MONOTONIC (the hook's records and this script share it):
  lease:  the fault -> the Lease names another holder (polled every 20 ms);
  work:   the fault -> the first singleton hook another agent starts.
Modes: kill (SIGKILL: the others wait out the lease duration) and stop (SIGTERM: the leader
finishes its hook, releases the Lease, and another takes it on its next attempt). The ended
agent is started again before the next round. Every round also checks that no two agents ever
ran singleton hooks at the same time (the e2e oracle).

usage: test/bench/handover.py [--rounds 10] [--modes kill,stop] [--lease 15,10,2] [--json FILE]
Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER like the e2e tests (or the default build paths).
Wall-clock figures on a loaded machine are upper bounds.
"""

import argparse
import json
import signal
import sys
import tempfile
import time
from pathlib import Path

E2E = Path(__file__).resolve().parents[1] / "e2e"
for extra in (E2E, Path(__file__).resolve().parent):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from conftest import Agent, Cluster, wait_until  # noqa: E402
from kube import Widgets, create_namespace  # noqa: E402
from reconnect_spread import summary  # noqa: E402
from singleton_runs import HOOK, Feeder, lease_holder, overlaps, read_runs  # noqa: E402

NAMESPACE = "handover"
LEASE = "nodehook-singleton"
NODES = ("hand-a", "hand-b", "hand-c")


def wait_for_other_holder(kube, old, timeout):
    while True:
        holder = lease_holder(kube, NAMESPACE, LEASE)
        if holder and holder != old:
            return time.monotonic(), holder
        if time.monotonic() > timeout:
            raise TimeoutError(f"no holder other than {old}")
        time.sleep(0.02)  # polling the Lease is the measurement itself


def one_round(kube, agents, run_log, mode):
    leader = wait_until(lambda: lease_holder(kube, NAMESPACE, LEASE), "a leader")
    wait_until(lambda: [r for r in read_runs(run_log) if r.node == leader and r.how is None],
               f"a hook running on {leader}")
    fault = time.monotonic()
    if mode == "kill":
        agents[leader].kill()
    else:
        agents[leader].proc.send_signal(signal.SIGTERM)
    lease_at, successor = wait_for_other_holder(kube, leader, fault + 120)
    first = wait_until(lambda: [r for r in read_runs(run_log) if r.node == successor and r.start > fault],
                       f"{successor} starting a hook")[0]
    if mode == "stop":
        agents[leader].proc.wait(timeout=60)
    agents[leader].start()
    wait_until(lambda: agents[leader].log_events("leader election started"), f"{leader} rejoining")
    return {"leader": leader, "successor": successor, "lease_s": round(lease_at - fault, 3),
            "work_s": round(first.start - fault, 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="handovers per mode")
    parser.add_argument("--modes", default="kill,stop")
    parser.add_argument("--lease", default="15,10,2", help="duration,renew deadline,retry period (s)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    duration, deadline, retry = (int(x) for x in args.lease.split(","))

    work = Path(tempfile.mkdtemp(prefix="nodehook-handover-"))
    (work / "cluster").mkdir()
    cluster = Cluster(work / "cluster")
    run_log = work / "runs.log"
    agents, feeder, results = {}, None, {"lease": [duration, deadline, retry]}
    try:
        create_namespace(cluster.kube, NAMESPACE)
        tuning = {"lease_namespace": NAMESPACE, "lease_name": LEASE, "lease_duration_seconds": duration,
                  "lease_renew_deadline_seconds": deadline, "lease_retry_period_seconds": retry}
        for node in NODES:
            agents[node] = Agent(node, work / node, cluster, NAMESPACE, ("create", "update", "delete"), tuning,
                                 hook=HOOK, env={"E2E_SINGLETON_LOG": str(run_log)},
                                 resource_options={"singleton": True}).start()
        feeder = Feeder(Widgets(cluster.kube, NAMESPACE), "w", interval=0.5)
        feeder.start()
        for mode in args.modes.split(","):
            rounds = [one_round(cluster.kube, agents, run_log, mode) for _ in range(args.rounds)]
            for r in rounds:
                print(mode, r, flush=True)
            results[mode] = {"rounds": rounds, "lease_s": summary([r["lease_s"] for r in rounds]),
                             "work_s": summary([r["work_s"] for r in rounds])}
            for key in ("lease_s", "work_s"):
                print(f"{mode} {key}: " + " ".join(f"{k}={v:.2f}" for k, v in results[mode][key].items()), flush=True)
        results["overlaps"] = [str(pair) for pair in overlaps(read_runs(run_log))]
        print(f"overlapping runs of two agents: {len(results['overlaps'])}")
        if args.json:
            args.json.write_text(json.dumps(results, indent=2))
        print(f"logs: {work}")
    finally:
        if feeder:
            feeder.stop()
        for agent in agents.values():
            agent.stop()
        cluster.stop()


if __name__ == "__main__":
    main()
