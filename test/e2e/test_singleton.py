"""Cluster-singleton handlers: three agents elect one leader with a Lease on the real API server,
and only it runs the singleton hooks. The leader is killed (SIGKILL), paused (SIGSTOP, with a hook
running that only `nodehook fence` can stop) and cut off from the API server (a proxy that stops
every byte); each time another agent takes over and handles what follows, and the hooks' own
start/end records (CLOCK_MONOTONIC, shared by every process on the host) never show two agents
running a singleton hook at the same time."""

import signal

from conftest import wait_until
from singleton_cluster import NODES, Singletons, assert_one_at_a_time, assert_stopped_before_takeover
from singleton_runs import Feeder
from recovery_times import FreezableProxy, proxied_kubeconfig  # noqa: E402  (singleton_cluster adds the path)


def test_a_killed_leader_is_replaced_and_two_agents_never_run_singleton_hooks_at_once(cluster, widgets, tmp_path):
    s = Singletons(cluster, widgets, tmp_path)
    try:
        for node in NODES:
            s.add(node)
        leader = s.wait_for_holder()
        feeder = Feeder(widgets, "kill", interval=0.5)
        feeder.start()
        wait_until(lambda: len([r for r in s.runs() if r.how == "done"]) >= 5, "five singleton runs")
        # Killed in the middle of a run (one without an end record yet).
        running = wait_until(lambda: [r for r in s.runs() if r.node == leader and r.how is None],
                             f"a hook running on {leader}")
        s.agents[leader].kill()
        successor = s.wait_for_holder(other_than=(leader,))
        feeder.stop()
        widgets.create("after-kill", {"size": 1})
        s.wait_done("after-kill", successor)
        # Every object gets its run (the queue is not strictly FIFO across a handover: objects
        # requeued when the term started may wait out a batching window).
        wanted = {f"kill-{i}" for i in range(feeder.created)}
        wait_until(lambda: wanted <= {r.name for r in s.runs() if r.how == "done"}, "a finished run of every widget")
        runs = s.runs()
        assert_one_at_a_time(runs)
        assert {leader, successor} <= {r.node for r in runs}
        # What the dead leader finished carries its annotation, so the successor adopts it instead
        # of running it again; only the run in flight at the kill may be repeated (it may have
        # finished a moment before the kill landed, its annotation not yet written).
        done = [r.name for r in runs if r.how == "done"]
        assert {n for n in done if done.count(n) > 1} <= {r.name for r in running}
    finally:
        s.stop_all()


def test_a_paused_leader_has_its_hook_fenced_and_rejoins_after_it_resumes(cluster, widgets, tmp_path):
    s = Singletons(cluster, widgets, tmp_path)
    try:
        for node in NODES:
            s.add(node)
        leader = s.wait_for_holder()
        # Longer than the lease: unfenced, it would still run when the successor starts.
        widgets.create("long-pause", {"seconds": 12})
        s.wait_running(leader, "long-pause")
        s.agents[leader].proc.send_signal(signal.SIGSTOP)
        successor = s.wait_for_holder(other_than=(leader,))
        widgets.create("after-pause", {"size": 1})
        s.wait_done("after-pause", successor)
        # The paused agent could not stop its hook; the fence did, before anyone took over.
        assert_stopped_before_takeover(s, leader, "long-pause", successor)

        s.agents[leader].proc.send_signal(signal.SIGCONT)
        widgets.create("after-resume", {"size": 1})
        s.wait_done("after-resume", successor)
        wait_until(lambda: s.agents[leader].log_events("leadership lost"), f"{leader} noticing it lost the lease")
        # It rejoined the election: once the others leave (and release the Lease) it leads again.
        for node in NODES:
            if node != leader:
                s.agents[node].stop()
        assert s.wait_for_holder(other_than=tuple(n for n in NODES if n != leader)) == leader
        widgets.create("rejoined", {"size": 1})
        s.wait_done("rejoined", leader)
        assert_one_at_a_time(s.runs())
    finally:
        s.stop_all()


def test_a_leader_cut_off_from_the_api_server_stops_its_hooks_before_another_takes_over(cluster, widgets, tmp_path):
    s = Singletons(cluster, widgets, tmp_path)
    upstream = int(cluster.kube.server.rsplit(":", 1)[1])
    proxy = FreezableProxy(upstream)
    try:
        # The proxied agent starts alone, so it is the leader when its connection is cut.
        cut_off = s.add(NODES[0], proxied_kubeconfig(cluster, proxy, tmp_path / "proxied-kubeconfig")).node
        assert s.wait_for_holder() == cut_off
        for node in NODES[1:]:
            s.add(node)
        widgets.create("long-cut", {"seconds": 12})
        s.wait_running(cut_off, "long-cut")
        proxy.freeze(new_too=True)  # every byte stops, old connections and new ones alike
        successor = s.wait_for_holder(other_than=(cut_off,))
        widgets.create("after-cut", {"size": 1})
        s.wait_done("after-cut", successor)
        assert_stopped_before_takeover(s, cut_off, "long-cut", successor)
        proxy.thaw()
        widgets.create("after-thaw", {"size": 1})
        s.wait_done("after-thaw", successor)
        assert_one_at_a_time(s.runs())
        assert s.agents[cut_off].log_events("leadership lost")
    finally:
        proxy.thaw()
        s.stop_all()
