"""The demo (test/demo.sh --non-interactive) runs from start to end, its commands are kubectl with
the demo's kubeconfig, and it prints no warning or error it did not ask for: the only ones allowed
are in the section that makes a hook fail on purpose."""

import os
import re
import signal
import subprocess

import pytest

from conftest import REPO, _binary, wait_until
from deploy_tools import kubectl_binary

WARNING = re.compile(r"level=(warn|error)|\bwarn(ing)?\b|\berror\b", re.I)
ASKED_FOR = "== a hook that fails"


def unasked_warnings(output):
    section, found = "", []
    for line in output.splitlines():
        plain = re.sub(r"\x1b\[[0-9;]*m", "", line)
        if plain.startswith("== "):
            section = plain
        elif WARNING.search(plain) and not section.startswith(ASKED_FOR):
            found.append(f"{section}: {plain}")
    return found


def test_the_demo_runs_through_with_kubectl_and_no_warning_it_did_not_ask_for(tmp_path):
    env = dict(os.environ, NODEHOOK_DEMO_DIR=str(tmp_path / "demo"),
               NODEHOOK_BIN=str(_binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")),
               NODEHOOK_TESTCLUSTER=str(_binary("NODEHOOK_TESTCLUSTER", REPO / "build" / "cache" / "nodehook-testcluster")),
               NODEHOOK_KUBECTL=str(kubectl_binary()))
    done = subprocess.run([str(REPO / "test" / "demo.sh"), "--non-interactive"], env=env, capture_output=True,
                          text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert unasked_warnings(output) == [], output[-6000:]
    commands = [l for l in output.splitlines() if l.startswith("$ ")]
    assert commands and all(c.startswith("$ kubectl ") for c in commands)
    assert "export KUBECONFIG=" in output
    if os.geteuid() == 0:
        assert "$ kubectl nodehook" in commands and "$ kubectl nodehook failing" in commands
    assert "HandlerFailing" in output and "HandlerRecovered" in output  # kubectl describe / get events
    assert "node-b ran after its restart: " in output
    # Node outputs: the condition and the hook's label on both nodes, under the node-bound rules.
    assert re.search(r"node-a +True +blue\nnode-b +True +blue", output), output[-6000:]
    # The widget's Ready condition, kept by the steward from both nodes' records: kubectl wait returns
    # once both handled its new generation.
    assert "widget.example.com/painter condition met" in output, output[-6000:]
    assert re.search(r"painter +2 +True +2 +2/2 nodes", output), output[-6000:]
    for node in ("node-a", "node-b"):
        assert f"   {node}: in progress, then in progress, then done" in output
        # Each agent runs confined to its node, and found the rules in force (docs/security.md).
        assert f'event="node isolation checked" node={node} result=protected' in output
    assert "-- what the hook recorded on node-a" in output  # stopped cleanly


def test_the_warning_filter_catches_what_it_should():
    out = "== starting\n[node-a] ts=x level=warn event=\"health endpoints not listening\"\n" \
          "== a hook that fails: ...\n[node-a] level=warn event=\"hook failed\"\n== next\nall good\n"
    assert unasked_warnings(out) == ['== starting: [node-a] ts=x level=warn event="health endpoints not listening"']


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_stops_the_interactive_demo_cleanly(tmp_path, inherited):
    """`ignored`: started as a background job of a non-interactive shell (`test/run-tests.sh &`, a
    CI runner) is, with SIGINT ignored. The demo still stops on it: it used to pause for ever."""
    env = dict(os.environ, NODEHOOK_DEMO_DIR=str(tmp_path / "demo"),
               NODEHOOK_BIN=str(_binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")),
               NODEHOOK_TESTCLUSTER=str(_binary("NODEHOOK_TESTCLUSTER", REPO / "build" / "cache" / "nodehook-testcluster")),
               NODEHOOK_KUBECTL=str(kubectl_binary()))
    log = tmp_path / "demo.out"
    with open(log, "w") as out:
        # A session of its own, like a terminal's foreground job: Ctrl-C is SIGINT to its group.
        disposition = signal.SIG_IGN if inherited == "ignored" else signal.SIG_DFL
        demo = subprocess.Popen([str(REPO / "test" / "demo.sh")], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, disposition))
        try:
            wait_until(lambda: "Ctrl-C stops the agents" in log.read_text() or demo.poll() is not None,
                       "the demo to finish its walkthrough", timeout=300)
            assert demo.poll() is None, log.read_text()[-4000:]
            os.killpg(demo.pid, signal.SIGINT)
            assert demo.wait(timeout=120) == 0
        finally:
            if demo.poll() is None:
                os.killpg(demo.pid, signal.SIGKILL)
                # The agents and the API server run in sessions of their own: a demo that did not
                # stop would leave them running for the rest of the suite.
                subprocess.run(["pkill", "-KILL", "-f", str(tmp_path / "demo")], check=False)
    output = log.read_text()
    after = output[output.index("Ctrl-C stops the agents"):]
    assert unasked_warnings(after) == [], after[-4000:]
    assert '[node-a] ' in after and 'event="agent stopped"' in after
    assert "-- what the hook recorded on node-b" in after
    leftovers = subprocess.run(["pgrep", "-f", str(tmp_path / "demo")], capture_output=True, text=True).stdout
    assert leftovers == ""
