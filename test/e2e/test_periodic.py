"""End-to-end: the node snapshot hook and the periodic check hook (issue 12) against the real API
server. Runs are counted from the hooks' own records (test/e2e/hooks/snapshot-record-hook and
check-record-hook), never from the agent's log."""

import sqlite3
import time
from pathlib import Path

from conftest import wait_until

HOOKS = Path(__file__).resolve().parent / "hooks"
SNAPSHOT_HOOK = HOOKS / "snapshot-record-hook"
CHECK_HOOK = HOOKS / "check-record-hook"


def snapshot_runs(path):
    """Snapshot hook runs so far: dicts with node, objects, changed, retry, result."""
    if not path.exists():
        return []
    runs = []
    for line in path.read_text().splitlines():
        _, node, objects, changed, retry, result = line.split()
        runs.append({"node": node, "objects": int(objects), "changed": int(changed), "retry": int(retry),
                     "result": result})
    return runs


def check_runs(path, reason="check"):
    """Hook runs recorded by check-record-hook: dicts with reason, node, name, uid, time."""
    if not path.exists():
        return []
    runs = []
    for line in path.read_text().splitlines():
        r_reason, node, name, uid, at = line.split()
        if r_reason == reason:
            runs.append({"reason": r_reason, "node": node, "name": name, "uid": uid, "time": float(at)})
    return runs


def snapshot_agent(make_agent, tmp_path, node="node-a", run_on_start=False, **tuning):
    runs = tmp_path / f"{node}-snapshots.txt"
    rendered = tmp_path / f"{node}-widgets.hosts"
    hook = {"argv": [str(SNAPSHOT_HOOK)], "timeout_seconds": 20}
    if run_on_start:
        hook["run_on_start"] = True
    agent = make_agent(node, reasons=(), env={"SNAPSHOT_RUNS_FILE": str(runs), "WIDGET_HOSTS_FILE": str(rendered)},
                       resource_options={"hooks": {"snapshot": hook}}, **tuning)
    return agent, runs, rendered


def test_snapshot_renders_one_file_from_50_objects_and_coalesces_10_changes_into_one_run(
        make_agent, widgets, tmp_path):
    for i in range(50):
        widgets.create(f"w{i:02}", {"address": f"10.0.0.{i}"})
    # A wide window: the ten patches below come one after another, each well within it.
    agent, runs, rendered = snapshot_agent(make_agent, tmp_path, batch_window_ms=3000, max_latency_ms=20000)
    agent.start()
    wait_until(lambda: [r for r in snapshot_runs(runs) if r["result"] == "ok"], "the first snapshot run")
    first = snapshot_runs(runs)
    assert first == [{"node": "node-a", "objects": 50, "changed": 0, "retry": 0, "result": "ok"}]
    assert len(rendered.read_text().splitlines()) == 1 + 50

    for i in range(10):
        widgets.patch_spec(f"w{i:02}", {"address": f"10.1.0.{i}"})
    wait_until(lambda: len(snapshot_runs(runs)) >= 2, "a snapshot run after the changes")
    # The second run already saw all ten changes: nothing is left for a third.
    assert snapshot_runs(runs)[1] == {"node": "node-a", "objects": 50, "changed": 10, "retry": 0, "result": "ok"}
    text = rendered.read_text()
    assert all(f"10.1.0.{i}\tw{i:02}.{widgets.namespace}.widgets" in text for i in range(10))



def test_a_restart_with_nothing_changed_does_not_run_the_snapshot_again(make_agent, widgets, tmp_path):
    for i in range(3):
        widgets.create(f"w{i}", {"address": f"10.0.0.{i}"})
    agent, runs, _ = snapshot_agent(make_agent, tmp_path, log_level="debug")
    agent.start()
    wait_until(lambda: len(snapshot_runs(runs)) >= 1, "the first snapshot run")
    agent.stop()
    agent.start()
    # The restarted agent compared the listed objects with the stored digest and found no change.
    wait_until(lambda: agent.log_events("snapshot unchanged"), "the restarted agent's snapshot decision")
    assert len(snapshot_runs(runs)) == 1
    widgets.patch_spec("w0", {"address": "10.1.0.0"})  # a real change still runs it
    wait_until(lambda: len(snapshot_runs(runs)) >= 2, "a snapshot run after a change")
    assert snapshot_runs(runs)[1]["changed"] == 1


def test_snapshot_run_on_start_reruns_after_a_restart(make_agent, widgets, tmp_path):
    widgets.create("w1", {"address": "10.0.0.1"})
    agent, runs, _ = snapshot_agent(make_agent, tmp_path, run_on_start=True)
    agent.start()
    wait_until(lambda: len(snapshot_runs(runs)) >= 1, "the first snapshot run")
    agent.stop()
    agent.start()
    wait_until(lambda: len(snapshot_runs(runs)) >= 2, "the run_on_start snapshot run")
    assert [r["objects"] for r in snapshot_runs(runs)] == [1, 1]


def test_a_failing_snapshot_hook_is_retried_until_it_succeeds(make_agent, widgets, tmp_path):
    widgets.create("w1", {"address": "10.0.0.1"})
    agent, runs, rendered = snapshot_agent(make_agent, tmp_path)
    (agent.control_dir / "fail-snapshot").write_text("2")
    agent.start()
    wait_until(lambda: [r for r in snapshot_runs(runs) if r["result"] == "ok"], "a successful snapshot run")
    assert [(r["retry"], r["result"]) for r in snapshot_runs(runs)] == [(0, "failed"), (1, "failed"), (2, "ok")]
    assert "10.0.0.1\tw1." in rendered.read_text()


def check_agent(make_agent, tmp_path, node, interval_seconds):
    files = tmp_path / f"{node}-files"
    files.mkdir()
    runs = tmp_path / f"{node}-checks.txt"
    hook = {"argv": [str(CHECK_HOOK)], "timeout_seconds": 20}
    hooks = {reason: dict(hook) for reason in ("create", "update", "delete")}
    hooks["check"] = dict(hook, interval_seconds=interval_seconds, jitter_percent=0)
    agent = make_agent(node, reasons=(), env={"CHECK_RUNS_FILE": str(runs), "NODE_FILE_DIR": str(files)},
                       resource_options={"hooks": hooks})
    return agent, runs, files


def test_a_check_hook_repairs_drift_on_every_node(make_agent, widgets, tmp_path):
    nodes = [check_agent(make_agent, tmp_path, node, interval_seconds=2) for node in ("node-a", "node-b")]
    for agent, _, _ in nodes:
        agent.start()
    widgets.create("w1", {"size": 1})
    for agent, runs, files in nodes:
        target = files / f"{widgets.namespace}_w1.json"
        wait_until(target.exists, f"the file of w1 on {agent.node}")
        wait_until(lambda: check_runs(runs), f"a first check on {agent.node}")
        target.unlink()  # drift: someone removed what the hook wrote
    for agent, runs, files in nodes:
        target = files / f"{widgets.namespace}_w1.json"
        wait_until(target.exists, f"the check on {agent.node} to write w1's file again")
        assert '"size":1' in target.read_text().replace(" ", "")
        assert all(r["node"] == agent.node and r["name"] == "w1" for r in check_runs(runs))


def stored_check_times(state_file):
    with sqlite3.connect(f"file:{state_file}?mode=ro", uri=True) as db:
        return {uid: due / 1000.0 for uid, due in db.execute("SELECT uid, due_ms FROM check_schedule")}


def test_check_times_are_kept_across_a_restart_so_no_burst_of_checks(make_agent, widgets, tmp_path):
    interval = 20
    agent, runs, _ = check_agent(make_agent, tmp_path, "node-a", interval_seconds=interval)
    names = [f"w{i}" for i in range(10)]
    for name in names:
        widgets.create(name, {"size": 1})
    agent.start()
    wait_until(lambda: len(check_runs(runs, "create")) == len(names), "every create")
    wait_until(lambda: len(check_runs(runs)) >= 3, "a few first checks")
    agent.stop()
    due = stored_check_times(agent.state_file)
    assert set(due) == {r["uid"] for r in check_runs(runs, "create")}
    checked_before = len(check_runs(runs))
    restarted_at = time.time()
    agent.start()
    # Every object is checked again, each at (not before) the time stored for it: a restart
    # neither fires the checks at once nor skips one.
    wait_until(lambda: {r["uid"] for r in check_runs(runs)[checked_before:]} == set(due),
               "every object's next check after the restart", timeout=interval * 2 + 30)
    after = check_runs(runs)[checked_before:]
    first_after = {}
    for r in after:
        first_after.setdefault(r["uid"], r["time"])
    for uid, at in first_after.items():
        expected = max(due[uid], restarted_at)
        assert at >= expected - 0.05, f"{uid} checked {expected - at:.2f}s before it was due"
