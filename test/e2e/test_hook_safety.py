"""End-to-end: hooks that break the protocol, on purpose (test/e2e/hooks/misbehaving-hook), against
the real API server. None of them may hang a worker, loop hot, flood the log, reach the reader's
terminal through `nodehook state`, or leave files behind."""

import json
import os
import subprocess
import time
from pathlib import Path

from conftest import _binary, REPO, wait_until

MISBEHAVING_HOOK = Path(__file__).resolve().parent / "hooks" / "misbehaving-hook"


def state(agent, *args):
    """Runs `nodehook state ARGS` against the agent's state file; returns stdout as bytes."""
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    done = subprocess.run([str(binary), "state", *args, "--state-file", str(agent.state_file),
                           "--node-name", agent.node], capture_output=True, timeout=60, check=True)
    return done.stdout


def handler(agent, uid, name):
    shown = json.loads(state(agent, "show", uid, "--json").decode(errors="replace"))
    return next(h for h in shown["handlers"] if h["handler"] == name)


def uid_of(widgets, name):
    return widgets.get(name)["metadata"]["uid"]


def run_create_hook(make_agent, widgets, name):
    """Starts an agent with the misbehaving hook, creates `name` and waits until its create hook
    ran and was handled; returns the agent and what the state says about that handler."""
    node = make_agent("node-a", reasons=("create",), hook=MISBEHAVING_HOOK).start()
    widgets.create(name, {"size": 1})
    node.wait_for(name, "create")
    node.settle(widgets)
    return node, handler(node, uid_of(widgets, name), "create")


def test_a_fifo_as_result_file_fails_the_run_and_the_only_worker_goes_on(make_agent, widgets):
    node = make_agent("node-a", reasons=("create",), hook=MISBEHAVING_HOOK).start()
    widgets.create("fifo-1", {"size": 1})
    widgets.create("plain-1", {"size": 1})
    node.wait_for("fifo-1", "create")
    node.wait_for("plain-1", "create")  # one worker: it did not hang on the FIFO
    failed = handler(node, uid_of(widgets, "fifo-1"), "create")
    assert failed["outcome"] == "failed"
    assert failed["last_message"] == "exited 0: result file is not a regular file (a FIFO)"


def test_a_result_file_over_the_limit_is_a_failure_that_names_both_sizes(make_agent, widgets):
    _, failed = run_create_hook(make_agent, widgets, "big-result-1")
    assert failed["outcome"] == "failed"
    assert failed["last_message"] == "exited 0: result file is 1048576 bytes, the limit is 65536"


def test_an_absurd_delay_waits_a_day_instead_of_looping(make_agent, widgets):
    node, waiting = run_create_hook(make_agent, widgets, "huge-delay-1")
    assert len(node.records("huge-delay-1", "create")) == 1
    assert waiting["outcome"] == "retry_later"
    assert waiting["next_attempt_ms"] >= (time.time() + 23 * 3600) * 1000
    assert "1e+33 is more than the maximum 86400, used 86400" in waiting["last_message"]


def test_a_noisy_failing_hook_makes_a_short_log_line_and_state_show_escapes_it(make_agent, widgets):
    node, failed = run_create_hook(make_agent, widgets, "noisy-1")
    failed_lines = [line for line in node.log_path.read_bytes().splitlines()
                    if b'event="hook failed"' in line and b"noisy-1" in line]
    assert failed_lines
    for line in failed_lines:
        assert len(line) < 1024, f"a {len(line)}-byte log line"
        assert b"\x1b" not in line and b"the last words" in line
    assert "the last words" in failed["last_message"]  # the store keeps the tail
    shown = state(node, "show", uid_of(widgets, "noisy-1"))
    assert b"\x1b" not in shown and b"\x07" not in shown
    assert b"\\x1b[2Jthe last words" in shown


def test_scratch_directories_are_emptied_after_each_run_littered_ones_removed_and_leftovers_swept(
        make_agent, widgets):
    node = make_agent("node-a", reasons=("create",), hook=MISBEHAVING_HOOK)
    work_dir = node.hook_work_dir  # in memory by default
    work_dir.mkdir(mode=0o700)
    leftover = work_dir / "hook-Ab12Cd"
    (leftover / "nested").mkdir(parents=True)
    (leftover / "nested" / "result.json").write_text("{}")
    (work_dir / "operator-notes.txt").write_text("not ours")
    node.start()
    widgets.create("litter-1", {"size": 1})
    node.wait_for("litter-1", "create")
    node.settle(widgets)  # the sentinel's run is clean: its directory waits, empty, for the next

    def only_the_notes_and_an_emptied_directory():
        runs = [name for name in os.listdir(work_dir) if name != "operator-notes.txt"]
        return ((work_dir / "operator-notes.txt").exists() and len(runs) <= 1 and
                all(name != "hook-Ab12Cd" and not os.listdir(work_dir / name) for name in runs))
    # The littered directory goes just after its hook exits; a leaked one would stay for good.
    wait_until(only_the_notes_and_an_emptied_directory,
               "the littered and the swept directory to be removed, the operator's file to stay")
    swept = node.log_events("hook scratch directories swept")
    assert swept and swept[0]["removed"] == "1"
    assert node.stop() == 0
    assert os.listdir(work_dir) == ["operator-notes.txt"], "the idle directory goes when the agent stops"
