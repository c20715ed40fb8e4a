"""End-to-end: what the agent keeps on the node is private (issue 8 item 10), a state file on a
file system in memory is refused unless allowed, and `run` refuses hook programs that are not
there (issue 8 item 12). Real binary, real API server."""

import os
import shutil
import stat
import uuid
from pathlib import Path

from conftest import wait_until

MODES_HOOK = """#!/bin/sh
# Records the permission bits of each hook input file and of its directory, then succeeds.
cat >/dev/null
for f in "$NODEHOOK_OLD_FILE" "$NODEHOOK_NEW_FILE" "$NODEHOOK_DIFF_FILE" "$(dirname "$NODEHOOK_NEW_FILE")"; do
  stat -c '%a' "$f" >>"$E2E_RECORD_FILE"
done
"""


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def start_with_umask(agent, mask):
    """Starts `agent` with process umask `mask` (the child inherits it), restoring ours after."""
    previous = os.umask(mask)
    try:
        return agent.start()
    finally:
        os.umask(previous)


def test_state_files_and_hook_files_are_private_under_umask_000_and_old_loose_files_are_tightened(
        make_agent, widgets, tmp_path):
    hook = tmp_path / "modes-hook"
    hook.write_text(MODES_HOOK)
    hook.chmod(0o755)
    # What an older version left behind: its own 0755 directory with a 0644 state file and lock.
    state_dir = tmp_path / "state-private"
    state_dir.mkdir()
    state_dir.chmod(0o755)
    for name in ("state.db", "state.db.lock"):
        (state_dir / name).touch()
        (state_dir / name).chmod(0o644)
    agent = make_agent("node-private", reasons=("create",), hook=hook, state_file=state_dir / "state.db")
    start_with_umask(agent, 0)

    widgets.create("secret-holder", {"password": "hunter2"})
    wait_until(lambda: len(agent.record_file.read_text().split()) >= 4 if agent.record_file.exists() else False,
               f"the create hook to record its file modes (log: {agent.log_path})")
    assert agent.record_file.read_text().split() == ["600", "600", "600", "700"]

    assert mode(state_dir) == 0o700
    for suffix in ("", "-wal", "-shm", ".lock"):
        assert mode(f"{agent.state_file}{suffix}") == 0o600, suffix
    # Hook files go to a private directory in memory, not next to the state.
    assert mode(agent.hook_work_dir) == 0o700
    assert agent.log_events("hook work directory chosen")[0]["dir"] == str(agent.hook_work_dir)
    assert not (state_dir / "hook-scratch").exists()
    tightened = agent.log_events("state was readable by others; made it private")
    assert len(tightened) == 1
    assert tightened[0]["changed"] == (f"{state_dir} 0755->0700, {agent.state_file} 0644->0600, "
                                       f"{agent.state_file}.lock 0644->0600")


def test_a_state_file_on_tmpfs_is_refused_unless_allow_volatile_state_is_set(make_agent):
    volatile = Path("/dev/shm") / f"nodehook-e2e-{uuid.uuid4().hex}"
    volatile.mkdir()
    try:
        refused = make_agent("node-tmpfs", state_file=volatile / "state.db").start()
        assert refused.proc.wait(timeout=30) == 1
        error = refused.log_events("unusable state directory")[0]["error"]
        assert f"state directory {volatile} is on tmpfs" in error
        assert "allow_volatile_state" in error
        assert not (volatile / "state.db").exists()

        allowed = make_agent("node-tmpfs-ok", state_file=volatile / "state.db",
                             env={"NODEHOOK_ALLOW_VOLATILE_STATE": "true"}).start()
        wait_until(lambda: allowed.http_status() == 200, f"the agent on tmpfs to be ready (log: {allowed.log_path})")
        warning = allowed.log_events("state file on a file system in memory, accepted by allow_volatile_state")
        assert warning[0]["file_system"] == "tmpfs"
        allowed.stop()
    finally:
        shutil.rmtree(volatile, ignore_errors=True)


def test_run_refuses_a_hook_program_that_does_not_exist_unless_hook_checks_are_skipped(make_agent, tmp_path):
    missing = tmp_path / "no-such-hook"
    refused = make_agent("node-nohook", reasons=("create",), hook=missing).start()
    assert refused.proc.wait(timeout=30) == 2
    line = 1 + refused.config_file.read_text().splitlines().index(f'            "{missing}"')
    assert refused.log_path.read_text() == (f"{refused.config_file}:{line}: resources[0].hooks.create.argv[0]: "
                                            f"hook program {missing} does not exist (install it, fix the path, or "
                                            "set skip_hook_checks; to check the file away from the node: "
                                            "check-config --offline)\n")

    skipped = make_agent("node-nohook-skip", reasons=("create",), hook=missing,
                         env={"NODEHOOK_SKIP_HOOK_CHECKS": "true"}).start()
    wait_until(lambda: skipped.http_status() == 200,
               f"the agent to start without hook checks (log: {skipped.log_path})")
    skipped.stop()
