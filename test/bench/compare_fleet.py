"""The nodes of one system in test/bench/compare.py, started, waited for and measured together.

Waiting polls the hook record files and /proc. A system that stops making progress, exits, or
never becomes ready raises BenchError naming the system and what was missing, so a broken system
fails the benchmark (and the smoke); a slow one (a loaded machine) only takes longer."""

import time


class BenchError(Exception):
    pass


POLL_SECONDS = 0.05
# A system that handled nothing for this long while work is waiting is stuck, not slow.
STALL_SECONDS = 120


class Fleet:
    def __init__(self, system, nodes):
        self.system = system
        self.nodes = nodes

    def start(self):
        for node in self.nodes:
            node.start()

    def stop(self):
        for node in self.nodes:
            node.stop()

    def marks(self):
        return [node.mark() for node in self.nodes]

    def cpu(self):
        return [node.usage()[0] for node in self.nodes]

    def _check_alive(self):
        for node in self.nodes:
            if not node.alive():
                raise BenchError(f"{self.system} node {node.name} exited (code {node.proc.returncode if node.proc else '?'}); "
                                 f"see its log in {node.dir}")

    def wait_ready(self, timeout=300):
        """Seconds from each node's start until its readiness URL answered 200."""
        ready = [None] * len(self.nodes)
        deadline = time.monotonic() + timeout
        while None in ready:
            self._check_alive()
            for i, node in enumerate(self.nodes):
                if ready[i] is None and node.is_ready():
                    ready[i] = time.monotonic() - node.started_at
            if time.monotonic() > deadline:
                raise BenchError(f"{self.system}: not ready after {timeout}s")
            time.sleep(POLL_SECONDS)  # polling the probe
        return ready

    def wait_handled(self, marks, reason, names, stall_seconds=STALL_SECONDS):
        """Waits until every node has run the `reason` hook for every one of `names` after its mark;
        fails only when no node made progress for `stall_seconds` (slow is fine, stuck is not).
        Returns, per node, ({name: start time of its first such run}, (CPU seconds, runs seen) when
        the node's first run was seen)."""
        wanted = set(names)
        firsts = [None] * len(self.nodes)
        seen = [dict() for _ in self.nodes]
        offsets = list(marks)
        progress_at = time.monotonic()
        while True:
            for i, node in enumerate(self.nodes):
                runs, offsets[i] = node.records(offsets[i])
                before = len(seen[i])
                for run_reason, name, start in runs:
                    if run_reason == reason and name in wanted:
                        seen[i].setdefault(name, start)
                if len(seen[i]) > before:
                    progress_at = time.monotonic()
                if firsts[i] is None and seen[i]:
                    firsts[i] = (node.usage()[0], len(seen[i]))
            if all(len(s) == len(wanted) for s in seen):
                return [(seen[i], firsts[i]) for i in range(len(self.nodes))]
            self._check_alive()
            if time.monotonic() - progress_at > stall_seconds:
                missing = [f"{node.name}: {len(wanted) - len(s)} of {len(wanted)}" for node, s in zip(self.nodes, seen)]
                raise BenchError(f"{self.system}: no {reason} hook ran for {stall_seconds}s although some objects "
                                 f"are still waiting (missing {', '.join(missing)})")
            time.sleep(POLL_SECONDS)  # polling the hooks' record files

    def wait_quiet(self, window=1.0, busy_share=0.05, timeout=900):
        """Waits until no node used more than `busy_share` of a core over the last `window` seconds;
        returns the time.monotonic() of the last 0.1 s step in which a node was busy (when its
        work ended)."""
        deadline = time.monotonic() + timeout
        history = [(time.monotonic(), self.cpu())]
        last_busy = history[0][0]
        while time.monotonic() < deadline:
            time.sleep(0.1)  # sampling CPU time
            self._check_alive()
            now, cpu = time.monotonic(), self.cpu()
            prev_t, prev = history[-1]
            if any(c - p > busy_share * (now - prev_t) for c, p in zip(cpu, prev)):
                last_busy = now
            history = [h for h in history if now - h[0] <= window] + [(now, cpu)]
            t0, cpu0 = history[0]
            if now - t0 >= 0.9 * window and all(c - c0 <= busy_share * (now - t0) for c, c0 in zip(cpu, cpu0)):
                return last_busy
        raise BenchError(f"{self.system}: still busy after {timeout}s")
