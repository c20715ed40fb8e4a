"""Graceful shutdown (issue 9): on SIGTERM the agent takes no new work, lets running hooks finish
within shutdown_grace_seconds, then stops the rest (SIGTERM, SIGKILL after the kill delay) and
records them as interrupted, to run again after a restart; a second SIGTERM kills every hook's
process group at once. What the hooks did comes from their own records (test/e2e/hooks/
shutdown-hook), what was stored from the state file, read after the agent exited."""

import json
import os
import signal
import sqlite3
from pathlib import Path

from conftest import wait_until

SHUTDOWN_HOOK = Path(__file__).resolve().parent / "hooks" / "shutdown-hook"


def make_shutdown_agent(make_agent, grace_seconds):
    agent = make_agent("node-stop", hook=SHUTDOWN_HOOK, shutdown_grace_seconds=grace_seconds)
    agent.env["E2E_RUN_LOG"] = str(agent.dir / "runs.txt")
    return agent


def hook_lines(agent, kind, name):
    """The hook's records of one kind for one object, split into fields."""
    path = agent.dir / "runs.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return [line.split() for line in lines if line.split()[:2] == [kind, name]]


def make_slow(agent, name, seconds, ignore_term=False):
    (agent.control_dir / f"seconds-{name}").write_text(str(seconds))
    ignore = agent.control_dir / f"ignore-term-{name}"
    if ignore_term:
        ignore.write_text("")
    elif ignore.exists():
        ignore.unlink()


def state_rows(agent, uid):
    """(diffbase essence or None, [(handler, last_outcome, retries)]) for the object."""
    with sqlite3.connect(f"file:{agent.state_file}?mode=ro", uri=True) as db:
        essence = db.execute("SELECT essence FROM objects WHERE uid = ? AND node = ?", (uid, agent.node)).fetchone()
        handlers = db.execute("SELECT handler, last_outcome, retries FROM handlers WHERE uid = ? AND node = ?",
                              (uid, agent.node)).fetchall()
    return (essence[0] if essence else None), handlers


def process_gone(pid):
    """No such process, or a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


def group_gone(start):
    """Whether the hook and its background child of a "start" record are both gone."""
    return process_gone(int(start[4])) and process_gone(int(start[5]))


def start_with_running_hook(agent, widgets, name, seconds, ignore_term=False):
    """Creates object `name`, starts the agent and returns (uid, start record) once its create
    hook runs, which then takes `seconds`."""
    make_slow(agent, name, seconds, ignore_term)
    uid = widgets.create(name, {"size": 1})["metadata"]["uid"]
    agent.start()
    return uid, started_hook(agent, name)


def started_hook(agent, name, count=1):
    """Waits for the `count`-th start record of the object's hook and returns its fields."""
    return wait_until(lambda: hook_lines(agent, "start", name)[count - 1:],
                      f"run {count} of the hook for {name} to start (log: {agent.log_path})")[0]


def runs_again_after_restart(agent, widgets, name):
    """Restarts the agent with a quick hook: the stopped create runs again, as retry 0 (an
    interruption is no failure), never beside a leftover of the stopped run, and finishes."""
    make_slow(agent, name, seconds=0)
    agent.start()
    again = started_hook(agent, name, count=2)
    assert again[2:4] == ["create", "0"]
    agent.settle(widgets)
    assert hook_lines(agent, "overlap", name) == []
    assert len(hook_lines(agent, "end", name)) == 1


def test_a_hook_running_at_sigterm_finishes_within_the_grace_and_is_not_run_again(make_agent, widgets):
    agent = make_shutdown_agent(make_agent, grace_seconds=60)
    uid, _ = start_with_running_hook(agent, widgets, "slow", seconds=3)

    agent.proc.send_signal(signal.SIGTERM)
    assert agent.proc.wait(timeout=60) == 0

    assert len(hook_lines(agent, "end", "slow")) == 1
    assert hook_lines(agent, "term", "slow") == [], "the hook got SIGTERM although the grace had not passed"
    essence, handlers = state_rows(agent, uid)
    assert essence is not None and json.loads(essence)["spec"] == {"size": 1}
    assert handlers == []

    agent.start()
    agent.settle(widgets)
    assert len(hook_lines(agent, "start", "slow")) == 1, "a stored result ran again after the restart"
    assert hook_lines(agent, "overlap", "slow") == []


def test_a_hook_that_ignores_sigterm_is_killed_after_the_grace_and_runs_again_after_restart(make_agent, widgets):
    agent = make_shutdown_agent(make_agent, grace_seconds=1)
    uid, first = start_with_running_hook(agent, widgets, "stubborn", seconds=600, ignore_term=True)

    agent.proc.send_signal(signal.SIGTERM)
    assert agent.proc.wait(timeout=60) == 0

    assert hook_lines(agent, "term", "stubborn"), "the hook never got SIGTERM after the grace"
    assert hook_lines(agent, "end", "stubborn") == []
    wait_until(lambda: group_gone(first), "the hook and its child (both ignoring SIGTERM) to be SIGKILLed", timeout=10)
    essence, handlers = state_rows(agent, uid)
    assert essence is None
    assert handlers == [("create", "interrupted", 0)]

    runs_again_after_restart(agent, widgets, "stubborn")


def test_a_second_sigterm_kills_every_hook_group_at_once(make_agent, widgets):
    agent = make_shutdown_agent(make_agent, grace_seconds=600)
    uid, first = start_with_running_hook(agent, widgets, "stubborn", seconds=600, ignore_term=True)

    agent.proc.send_signal(signal.SIGTERM)
    # Two signals sent before the first is taken would merge into one: wait until it was taken.
    wait_until(lambda: agent.log_events("signal received"), f"the first SIGTERM to be taken (log: {agent.log_path})")
    agent.proc.send_signal(signal.SIGTERM)
    assert agent.proc.wait(timeout=60) == 128 + signal.SIGTERM

    wait_until(lambda: group_gone(first), "the hook's whole process group to be SIGKILLed", timeout=10)
    assert hook_lines(agent, "end", "stubborn") == []
    _, handlers = state_rows(agent, uid)
    assert [(h, retries) for h, _, retries in handlers] == [("create", 0)]

    runs_again_after_restart(agent, widgets, "stubborn")
