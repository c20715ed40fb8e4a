"""End-to-end: the agent as PID 1 of its own PID namespace (a container without an init), and
under tini as the image runs it. Hooks start daemons that outlive them; once those exit, nothing
in the namespace may stay a zombie."""

import os
import shutil
import signal
from pathlib import Path

import pytest

from conftest import wait_until

MISBEHAVING_HOOK = Path(__file__).resolve().parent / "hooks" / "misbehaving-hook"
NEW_PID_NAMESPACE = ("unshare", "--pid", "--fork", "--mount-proc", "--kill-child")
DAEMONS = 3


def children(pid):
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def namespace_processes(namespace):
    """(host pid, state, command) of every process in the PID namespace `namespace`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/pid") != namespace:
                continue
            stat = Path(f"/proc/{entry}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue  # gone meanwhile
        command, state = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2]
        found.append((int(entry), state, command))
    return found


def pid_in_namespace(host_pid):
    status = Path(f"/proc/{host_pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("NSpid:")).split()[-1])


@pytest.mark.parametrize("init", [(), ("tini", "--")], ids=["agent-as-pid-1", "under-tini"])
def test_daemons_left_by_hooks_never_stay_zombies(make_agent, widgets, init):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare for a new PID namespace")
    if init and not shutil.which(init[0]):
        pytest.skip(f"{init[0]} is not installed (test/install-deps.sh installs it)")
    node = make_agent("node-a", reasons=("create",), hook=MISBEHAVING_HOOK)
    node.launcher = (*NEW_PID_NAMESPACE, *init)
    node.start()
    first = wait_until(lambda: children(node.proc.pid), "the namespace's first process")[0]
    namespace = os.readlink(f"/proc/{first}/ns/pid")
    assert pid_in_namespace(first) == 1
    agent = first if not init else wait_until(lambda: children(first), "the agent under tini")[0]
    try:
        for i in range(DAEMONS):
            widgets.create(f"daemon-{i}", {"size": i})
        for i in range(DAEMONS):
            node.wait_for(f"daemon-{i}", "create")
        daemons = node.control_dir / "daemons"
        wait_until(lambda: daemons.exists() and len(daemons.read_text().split()) == DAEMONS, "the daemons to start")
        inits = {first, agent}
        # The daemons sleep briefly, then exit: then only the init (and the agent) may be left.
        wait_until(lambda: {pid for pid, _, _ in namespace_processes(namespace)} == inits,
                   "every daemon to be reaped (without a reaper they stay zombies for good)")
        assert not [p for p in namespace_processes(namespace) if p[1] == "Z"]
    finally:
        os.kill(first, signal.SIGTERM)  # the agent as PID 1 waits for SIGTERM; tini forwards it
        node.proc.wait(timeout=30)
    assert node.log_events("orphan reaper started")
    assert node.log_events("signal received"), "SIGTERM reached the agent's signal watcher: a clean stop"
