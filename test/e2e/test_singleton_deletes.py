"""Cluster-singleton deletions survive handovers (issue 19): the leader is SIGKILLed, SIGSTOPped
past its lease or cut off (a proxy that stops every byte, sockets open) in each of three windows,
and every deleted object some leader handled still gets its delete hook run, by a later leader,
while two agents never run singleton hooks at the same time.
  after_create     the create hook has finished, its progress is not written yet
  during_delete    the delete hook is running
  create_deleted   the create hook is running and the object is deleted meanwhile
Each agent sits behind its own freezable proxy, so whoever leads can be cut off. A hook run is
held at its end (singleton_cluster.Singletons.hold) so that the fault lands exactly in the window."""

import signal
import time

import pytest

from conftest import wait_until
from singleton_cluster import NODES, Singletons, assert_one_at_a_time

FINALIZER = "nodehook.io/singleton"


def fault(s, node, kind):
    """Returns when (CLOCK_MONOTONIC, as the hooks' records) the fault began."""
    at = time.monotonic()
    fault_now(s, node, kind)
    return at


def fault_now(s, node, kind):
    if kind == "kill":
        s.agents[node].kill()
    elif kind == "stop":
        s.agents[node].proc.send_signal(signal.SIGSTOP)
    else:
        s.proxies[node].freeze(new_too=True)


def recover(s, node, kind):
    if kind == "kill":
        s.agents[node].start()
    elif kind == "stop":
        s.agents[node].proc.send_signal(signal.SIGCONT)
    else:
        s.proxies[node].thaw()


def start_three(cluster, widgets, tmp_path):
    s = Singletons(cluster, widgets, tmp_path)
    for node in NODES:
        s.add(node, proxied=True)
    return s, s.wait_for_holder()


def report_handover(window, kind, faulted_at, delete_run):
    """Prints (pytest -s) how long after the fault the next leader started the delete: a figure
    for docs/singleton.md, not an assertion."""
    print(f"\nhandover {window} {kind}: fault -> delete hook started on the next leader "
          f"{delete_run.start - faulted_at:.2f} s")


def wait_gone(widgets, name):
    wait_until(lambda: not widgets.exists(name), f"{name} to disappear (its singleton finalizer removed)")


@pytest.mark.parametrize("kind", ["kill", "stop", "cut"])
def test_a_create_finished_but_not_recorded_still_owes_its_delete(cluster, widgets, tmp_path, kind):
    s, leader = start_three(cluster, widgets, tmp_path)
    try:
        s.hold(leader, "w", "create")
        widgets.create("w", {"seconds": 0.1})
        s.wait_held(leader, "w", "create")
        # The finalizer went on before the hook started.
        assert FINALIZER in widgets.get("w")["metadata"].get("finalizers", [])
        faulted_at = fault(s, leader, kind)
        s.release(leader, "w", "create")  # the hook ends "done"; its agent cannot record it
        wait_until(lambda: [r for r in s.runs() if r.name == "w" and r.how == "done"], "the create to end")
        widgets.delete("w")
        successor = s.wait_for_holder(other_than=(leader,))
        report_handover("after_create", kind, faulted_at, s.wait_done("w", successor, "delete"))
        wait_gone(widgets, "w")
        recover(s, leader, kind)
        # The old leader back in the election changes nothing: no second delete, no overlap.
        widgets.create("after", {"seconds": 0.1})
        s.wait_done("after", successor, "create")
        assert [r.reason for r in s.runs() if r.name == "w"] in (["create", "delete"], ["create", "create", "delete"])
        assert_one_at_a_time(s.runs())
    finally:
        s.stop_all()


@pytest.mark.parametrize("kind", ["kill", "stop", "cut"])
def test_a_delete_cut_short_with_its_leader_runs_on_the_next_leader(cluster, widgets, tmp_path, kind):
    s, leader = start_three(cluster, widgets, tmp_path)
    try:
        widgets.create("w", {"seconds": 0.1})
        s.wait_done("w", leader, "create")
        s.hold(leader, "w", "delete")
        widgets.delete("w")
        s.wait_held(leader, "w", "delete")
        faulted_at = fault(s, leader, kind)
        successor = s.wait_for_holder(other_than=(leader,))
        report_handover("during_delete", kind, faulted_at, s.wait_done("w", successor, "delete"))
        wait_gone(widgets, "w")
        s.release(leader, "w", "delete")
        recover(s, leader, kind)
        # The interrupted run ended before the successor's began (the fence or the term stopped it).
        interrupted = next(r for r in s.runs() if r.node == leader and r.reason == "delete")
        assert interrupted.how != "done"
        assert_one_at_a_time(s.runs())
    finally:
        s.stop_all()


@pytest.mark.parametrize("kind", ["kill", "stop", "cut"])
def test_an_object_deleted_while_its_create_runs_gets_its_delete_after_a_handover(cluster, widgets, tmp_path, kind):
    s, leader = start_three(cluster, widgets, tmp_path)
    try:
        s.hold(leader, "w", "create")
        widgets.create("w", {"seconds": 0.1})
        s.wait_held(leader, "w", "create")
        widgets.delete("w")  # the finalizer keeps it, being deleted
        assert widgets.get("w")["metadata"].get("deletionTimestamp")
        faulted_at = fault(s, leader, kind)
        successor = s.wait_for_holder(other_than=(leader,))
        report_handover("create_deleted", kind, faulted_at, s.wait_done("w", successor, "delete"))
        wait_gone(widgets, "w")
        s.release(leader, "w", "create")
        recover(s, leader, kind)
        assert [r.reason for r in s.runs() if r.node == successor and r.name == "w"] == ["delete"]
        assert_one_at_a_time(s.runs())
    finally:
        s.stop_all()
