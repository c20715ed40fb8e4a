"""What the singleton tests (and test/bench/handover.py) share: the runs singleton-hook recorded,
the oracle that no two agents ever ran singleton hooks at the same time, the Lease's holder, and
a feeder that keeps work arriving."""

import itertools
import threading
from pathlib import Path

from kube import ApiError

HOOK = Path(__file__).resolve().parent / "hooks" / "singleton-hook"
BEAT = 0.05  # singleton-hook's beat: a run killed by SIGKILL died within one beat of its last record


class Run:
    def __init__(self, node, pid, start, reason, name):
        self.node, self.pid, self.start, self.reason, self.name = node, pid, start, reason, name
        self.last = start
        self.how = None  # "done", "term", or None when it was killed without a word

    @property
    def end(self):
        return self.last if self.how else self.last + BEAT

    def __repr__(self):
        return f"{self.node}:{self.reason}:{self.name}[{self.start:.3f}..{self.end:.3f} {self.how or 'killed'}]"


def read_runs(log_path):
    """The runs in singleton-hook's log, in start order."""
    runs = {}
    if not Path(log_path).exists():
        return []
    for line in Path(log_path).read_text().splitlines():
        kind, node, at, pid, *rest = line.split()
        key = (node, pid)
        if kind == "start":
            runs[key] = Run(node, pid, float(at), rest[0], rest[1])
        elif key in runs:
            runs[key].last = max(runs[key].last, float(at))
            if kind == "end":
                runs[key].how = rest[0]
    return sorted(runs.values(), key=lambda r: r.start)


def overlaps(runs):
    """Pairs of runs of different agents whose [start, end] intervals intersect."""
    found = []
    for a, b in itertools.combinations(runs, 2):
        if a.node != b.node and a.start <= b.end and b.start <= a.end:
            found.append((a, b))
    return found


def lease_holder(kube, namespace, name):
    """spec.holderIdentity of the Lease, "" when released, None when there is no Lease yet."""
    try:
        lease = kube.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}")
    except ApiError as e:
        if e.status == 404:
            return None
        raise
    return lease.get("spec", {}).get("holderIdentity", "")


class Feeder(threading.Thread):
    """Creates a widget every `interval` seconds until stopped, so singleton hooks keep running."""

    def __init__(self, widgets, prefix, interval=0.3):
        super().__init__(daemon=True)
        self.widgets, self.prefix, self.interval = widgets, prefix, interval
        self.stopped = threading.Event()
        self.created = 0

    def run(self):
        while not self.stopped.wait(self.interval):
            self.widgets.create(f"{self.prefix}-{self.created}", {"size": self.created})
            self.created += 1

    def stop(self):
        self.stopped.set()
        self.join()
