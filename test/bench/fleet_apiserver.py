"""The one API server of the fleet simulation (test/cluster: kube-apiserver with etcd embedded in
the same process, so its CPU and memory include etcd's) and the driver's own client for it.

ApiServer keeps its figures across a restart: CPU seconds, request counters and watch-event
sizes of the process that stopped are added to those of the new one, and the peak RSS of the
current window (VmHWM, reset with clear_refs when a window opens) survives the restart too.
Writer sends creates, patches and deletes over one kept-alive TLS connection per thread, so the
driver's load on the server is requests, not handshakes. Both are used from the driver's main
thread, Writer also from a small pool (one connection per thread)."""

import sys
import time
from pathlib import Path

from fleet_probe import cpu_seconds, memory_kib, parse_prometheus, reset_peak_rss, sum_samples

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))

from compare_client import Api  # noqa: E402
from conftest import Cluster  # noqa: E402

RESOURCE = "widgets"


class Writer(Api):
    """Requests to the API server as the admin user, one kept-alive connection per thread (compare_client's
    Api); an answer of 300 or more raised as RuntimeError, naming the request."""

    def refused(self, method, path, status, payload):
        raise RuntimeError(f"{method} {path}: HTTP {status}: {payload[:300]!r}")

    def widgets(self, namespace):
        return f"/apis/example.com/v1/namespaces/{namespace}/widgets"


class ApiServer:
    def __init__(self, directory):
        self.cluster = Cluster(directory)
        self.writer = Writer(self.cluster.kubeconfig)
        self.cpu_done = 0.0
        self.counters_done = {}
        self.window_peak_kib = 0

    @property
    def pid(self):
        return self.cluster.proc.pid

    @property
    def kubeconfig(self):
        return self.cluster.kubeconfig

    def restart(self):
        """Stops the server (SIGTERM) and starts it on the same directory and port.
        Returns (seconds to stop, seconds from start to ready)."""
        self.cpu_done += cpu_seconds(self.pid) or 0.0
        self.counters_done = self.counters()
        self.window_peak_kib = max(self.window_peak_kib, memory_kib(self.pid, "VmHWM") or 0)
        t0 = time.time()
        self.cluster.stop()
        t1 = time.time()
        self.cluster.start()
        self.writer = Writer(self.cluster.kubeconfig)
        return t1 - t0, self.cluster.ready_at - t1

    def stop(self):
        self.cluster.stop()

    def cpu_total(self):
        return self.cpu_done + (cpu_seconds(self.pid) or 0.0)

    def open_window(self):
        """Starts a new peak-RSS period."""
        reset_peak_rss(self.pid)
        self.window_peak_kib = 0

    def window_peak(self):
        return max(self.window_peak_kib, memory_kib(self.pid, "VmHWM") or 0)

    def rss_kib(self):
        return memory_kib(self.pid, "VmRSS") or 0

    def heap_mib(self):
        """The Go heap in use (go_memstats_heap_inuse_bytes): live objects without GC headroom."""
        samples = parse_prometheus(self.writer.request("GET", "/metrics", raw=True))
        return sum_samples(samples, "go_memstats_heap_inuse_bytes") / (1024.0 * 1024.0)

    def counters(self):
        """Cumulative over restarts: requests on widgets by verb ("LIST", "WATCH", ...), the watch
        events sent to watchers of widgets (count, summed bytes), and where lists were served."""
        samples = parse_prometheus(self.writer.request("GET", "/metrics", raw=True))
        now = {f"requests {verb}": value
               for verb, value in sum_samples(samples, "apiserver_request_total", by="verb",
                                              resource=RESOURCE).items()}
        now["watch events"] = sum_samples(samples, "apiserver_watch_events_sizes_count", resource=RESOURCE)
        now["watch event bytes"] = sum_samples(samples, "apiserver_watch_events_sizes_sum", resource=RESOURCE)
        # Where lists were served: the watch cache, or etcd; a consistent read from the cache first
        # asks etcd for its current revision (an etcd "get").
        now["source cache lists"] = sum_samples(samples, "apiserver_cache_list_total", resource=RESOURCE)
        now["source cache objects scanned"] = sum_samples(samples, "apiserver_cache_list_fetched_objects_total",
                                                          resource=RESOURCE)
        now["source etcd lists"] = sum_samples(samples, "etcd_requests_total", resource=RESOURCE, operation="list")
        now["source etcd gets"] = sum_samples(samples, "etcd_requests_total", resource=RESOURCE, operation="get")
        return {k: self.counters_done.get(k, 0.0) + now.get(k, 0.0) for k in {*self.counters_done, *now}}
