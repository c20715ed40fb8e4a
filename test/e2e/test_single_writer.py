"""End-to-end: two agents for one node on ONE state file (a DaemonSet rolling update with surge,
or a new pod starting while the old one terminates). Exactly one acts; the other waits, not
ready, and takes over when the first is SIGKILLed (docs/state.md: at most 200 ms after the
holder exits, because the waiter polls the lock every 200 ms)."""

import statistics
import time
from datetime import datetime, timezone

from conftest import wait_until

LOCKED = "state file locked by another agent"
# What a waiting copy may log: process setup (no hook, no state) and the wait itself.
WAITING_EVENTS = {"orphan reaper started", "health endpoints listening", "admin endpoint listening", LOCKED}
DOCUMENTED_TAKEOVER = 0.2
# Room for the kill, the process exit and scheduling on a loaded 2-core machine; still far below
# anything a kubelet or a person would notice.
TAKEOVER_SLACK = 0.5
READY_BOUND = 10.0


def log_seconds(event):
    """Epoch seconds of a parsed log line's timestamp (millisecond resolution, UTC)."""
    stamp = datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
    return stamp.replace(tzinfo=timezone.utc).timestamp()


def waiting_for_lock(agent, holder):
    """Waits until `agent` logs that `holder` has the state file, and returns that log line."""
    locked = wait_until(lambda: agent.log_events(LOCKED), f"{agent.dir.name} to report the lock (log: {agent.log_path})")
    assert f"pid {holder.proc.pid} " in locked[0]["holder"]
    return locked[0]


def acted_while_waiting(agent):
    """Log events of `agent` other than those of waiting for the lock, so far."""
    return [e["event"] for e in agent.log_events() if e.get("event") not in WAITING_EVENTS]


def kill_and_measure_takeover(holder, waiter):
    """SIGKILLs `holder` and returns (seconds until `waiter` logged its first line after the
    lock wait, seconds until its /readyz said 200)."""
    assert acted_while_waiting(waiter) == [], f"{waiter.dir.name} acted before it had the lock"
    killed_at_wall, killed_at = time.time(), time.monotonic()
    holder.kill()
    wait_until(lambda: waiter.http_status("/readyz") == 200, f"{waiter.dir.name} to become ready", timeout=30)
    ready_after = time.monotonic() - killed_at
    first_act = next(e for e in waiter.log_events() if e.get("event") not in WAITING_EVENTS)
    return log_seconds(first_act) - killed_at_wall, ready_after


def test_second_agent_on_one_state_file_waits_unready_and_takes_over_after_a_sigkill(make_agent, widgets):
    first = make_agent("node-a").start()
    widgets.create("w1", {"size": 1})
    first.wait_for("w1", "create")
    second = make_agent("node-a", directory="node-a-second", state_file=first.state_file).start()
    waiting_for_lock(second, holder=first)
    assert second.http_status("/readyz") == 503
    assert first.http_status("/readyz") == 200

    # Only the holder acts: it handles new changes while the waiter runs nothing.
    widgets.create("w2", {"size": 2})
    widgets.patch_spec("w1", {"size": 3})
    first.wait_for("w2", "create")
    first.wait_for("w1", "update")
    first.settle(widgets)
    assert second.records() == []
    assert second.http_status("/readyz") == 503

    takeover, ready = kill_and_measure_takeover(first, second)
    print(f"\ntakeover after SIGKILL: lock {takeover * 1000:.0f} ms, ready {ready * 1000:.0f} ms")
    assert takeover < DOCUMENTED_TAKEOVER + TAKEOVER_SLACK
    assert ready < READY_BOUND

    # The survivor continues from the shared state: nothing handled runs again, changes do.
    widgets.patch_spec("w2", {"size": 4})
    second.wait_for("w2", "update")
    second.settle(widgets)
    assert [(r["name"], r["reason"]) for r in second.records() if not r["name"].startswith("sentinel-")] == \
        [("w2", "update")]
    runs_of_first = len(first.records())

    # The killed copy coming back now waits in turn, not ready, and SIGTERM ends the wait cleanly.
    first.start()
    waiting_for_lock(first, holder=second)
    assert first.http_status("/readyz") == 503
    second.settle(widgets)
    assert acted_while_waiting(first) == []
    assert first.stop() == 0
    assert len(first.records()) == runs_of_first


def test_takeover_time_over_repeated_handovers(make_agent, widgets):
    """Alternates which copy holds the file and measures each takeover after a SIGKILL."""
    a = make_agent("node-a").start()
    b = make_agent("node-a", directory="node-a-second", state_file=a.state_file)
    wait_until(lambda: a.http_status("/readyz") == 200, "the first agent to become ready")
    takeovers, readies = [], []
    holder, waiter = a, b
    for _ in range(5):
        waiter.start()
        waiting_for_lock(waiter, holder=holder)
        takeover, ready = kill_and_measure_takeover(holder, waiter)
        takeovers.append(takeover)
        readies.append(ready)
        holder, waiter = waiter, holder
    print(f"\ntakeover after SIGKILL (5 handovers): lock ms {[round(t * 1000) for t in takeovers]} "
          f"median {statistics.median(takeovers) * 1000:.0f}; ready ms {[round(r * 1000) for r in readies]} "
          f"median {statistics.median(readies) * 1000:.0f}")
    assert max(takeovers) < DOCUMENTED_TAKEOVER + TAKEOVER_SLACK
    assert max(readies) < READY_BOUND


def test_a_second_copy_on_a_host_network_node_waits_for_the_health_port_too(make_agent, widgets):
    """With hostNetwork both copies want the same health port: the second must keep waiting
    (for the port and the lock), not exit, and serve once the first is gone."""
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    first = make_agent("node-a", health_address=address).start()
    widgets.create("w1", {"size": 1})
    first.wait_for("w1", "create")
    second = make_agent("node-a", directory="node-a-second", state_file=first.state_file,
                        health_address=address).start()
    wait_until(lambda: second.log_events("health endpoints not listening"),
               f"the second copy to report the busy port (log: {second.log_path})")
    waiting_for_lock(second, holder=first)
    assert second.proc.poll() is None, "the second copy exited instead of waiting"
    first.kill()
    wait_until(lambda: second.log_events("health endpoints listening"), "the second copy to take the port")
    wait_until(lambda: second.http_status("/readyz") == 200, "the second copy to become ready", timeout=30)
