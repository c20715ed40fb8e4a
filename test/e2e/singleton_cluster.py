"""Three agents electing a singleton leader on the real API server, for the singleton tests: each
agent may sit behind its own FreezableProxy (so whoever leads can be cut off), the hooks' run log,
the Lease's holder, and holding a hook run at its end to fault its agent in exactly that window."""

import os
import sys
from pathlib import Path

from conftest import Agent, stop_faulted, wait_until
from singleton_runs import HOOK, lease_holder, overlaps, read_runs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from recovery_times import FreezableProxy, proxied_kubeconfig  # noqa: E402

# Short, so a handover takes seconds: hooks stop 3 s after the last renew (SIGKILL 2 s later),
# another agent may take over 6 s after it last saw the Lease change.
LEASE = {"lease_duration_seconds": 6, "lease_renew_deadline_seconds": 3, "lease_retry_period_seconds": 1,
         "reconnect_max_ms": 2000}
NODES = ("lease-a", "lease-b", "lease-c")


class Singletons:
    def __init__(self, cluster, widgets, tmp_path):
        self.kube, self.widgets, self.tmp = cluster.kube, widgets, tmp_path
        self.cluster = cluster
        self.run_log = tmp_path / "runs.log"
        self.lease = f"singleton-{os.getpid()}-{widgets.namespace}"
        self.agents = {}
        self.proxies = {}

    def add(self, node, cluster_like=None, proxied=False):
        if proxied:
            proxy = FreezableProxy(int(self.cluster.kube.server.rsplit(":", 1)[1]))
            self.proxies[node] = proxy
            cluster_like = proxied_kubeconfig(self.cluster, proxy, self.tmp / f"kubeconfig-{node}")
        tuning = {**LEASE, "lease_namespace": self.widgets.namespace, "lease_name": self.lease}
        agent = Agent(node, self.tmp / node, cluster_like or self.cluster, self.widgets.namespace,
                      ("create", "update", "delete"), tuning, hook=HOOK,
                      env={"E2E_SINGLETON_LOG": str(self.run_log)}, resource_options={"singleton": True})
        self.agents[node] = agent
        return agent.start()

    def holder(self):
        return lease_holder(self.kube, self.widgets.namespace, self.lease)

    def wait_for_holder(self, other_than=()):
        return wait_until(lambda: (h := self.holder()) and h not in other_than and h,
                          f"a lease holder other than {other_than or 'none'}")

    def runs(self):
        return read_runs(self.run_log)

    def wait_running(self, node, name, reason=None):
        return wait_until(lambda: [r for r in self.runs() if r.node == node and r.name == name
                                   and reason in (None, r.reason)],
                          f"{node} running the hook of {name}")[-1]

    def wait_done(self, name, node, reason=None):
        return wait_until(lambda: [r for r in self.runs() if r.name == name and r.how == "done" and r.node == node
                                   and reason in (None, r.reason)],
                          f"{node} finishing the {reason or ''} hook of {name} (log: {self.agents[node].log_path})")[0]

    def hold(self, node, name, reason):
        """`node`'s next run of `name` for `reason` waits at its end until `release`."""
        (self.agents[node].control_dir / f"hold-{name}-{reason}").write_text("")

    def wait_held(self, node, name, reason):
        held = self.agents[node].control_dir / f"held-{name}-{reason}"
        wait_until(held.exists, f"{node}'s run of {name} ({reason}) reaching its end")

    def release(self, node, name, reason):
        (self.agents[node].control_dir / f"hold-{name}-{reason}").unlink(missing_ok=True)

    def stop_all(self):
        stop_faulted(self.agents.values(), self.proxies.values())


def assert_one_at_a_time(runs):
    assert overlaps(runs) == [], "two agents ran singleton hooks at the same time"


def assert_stopped_before_takeover(s, node, name, successor):
    """`node`'s run of `name` was stopped (SIGTERM) before `successor` started any hook."""
    run = next(r for r in s.runs() if r.node == node and r.name == name)
    assert run.how == "term"
    assert run.end < min(r.start for r in s.runs() if r.node == successor)
