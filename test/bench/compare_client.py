"""The load generator's API client for test/bench/compare.py: keep-alive HTTPS connections (one per
thread), so the driver can create thousands of widgets and patch at 200 changes/s without a TLS
handshake per request, and the API server's own request counters for counting agents' writes."""

import http.client
import json
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

from kube import ApiError, Kube

WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE", "APPLY")
# The API server renews its own identity Leases; no agent in the benchmark writes Leases.
SERVER_OWN_RESOURCES = ("leases",)


class Api:
    def __init__(self, kubeconfig):
        self.kube = Kube(kubeconfig)  # parses server, token and CA the same way the e2e tests do
        url = urllib.parse.urlsplit(self.kube.server)
        self.host, self.port = url.hostname, url.port
        self.local = threading.local()

    def _connection(self):
        if getattr(self.local, "conn", None) is None:
            self.local.conn = http.client.HTTPSConnection(self.host, self.port, context=self.kube.ssl, timeout=60)
        return self.local.conn

    def request(self, method, path, body=None, content_type="application/json", raw=False):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.kube.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):  # a keep-alive connection the server closed is reopened once
            conn = self._connection()
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                payload = resp.read()
                break
            except (http.client.HTTPException, OSError):  # OSError: ssl.SSLEOFError, ConnectionResetError
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
        if resp.status >= 300:
            self.refused(method, path, resp.status, payload)
        if raw:
            return payload.decode()
        return json.loads(payload) if payload else None

    def refused(self, method, path, status, payload):
        """Raises for an answer of 300 or more: ApiError."""
        raise ApiError(status, payload.decode(errors="replace"))

    def create_namespace(self, name):
        self.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def create_widgets(self, namespace, names, threads=4):
        """Creates widgets `names` in `namespace` from a few threads; returns when all exist."""
        base = f"/apis/example.com/v1/namespaces/{namespace}/widgets"

        def create(name):
            self.request("POST", base, {"apiVersion": "example.com/v1", "kind": "Widget",
                                        "metadata": {"name": name}, "spec": {"seq": 0, "payload": "x" * 200}})
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(create, names))

    def patch_seq(self, namespace, name, seq):
        """Sets spec.seq; returns (time.time() when the write was sent, when its answer arrived)."""
        sent = time.time()
        self.request("PATCH", f"/apis/example.com/v1/namespaces/{namespace}/widgets/{name}", {"spec": {"seq": seq}},
                     "application/merge-patch+json")
        return sent, time.time()

    def paced_patches(self, namespace, names, seq, rate):
        """Patches each of `names` once, change k due at start + k/rate, from enough senders (each
        with its own connection) that answers slowed by a busy system under test (200 ms and more)
        do not hold back the next change: the schedule stays open-loop. Returns
        ({name: (time the write was sent, time its answer arrived)}, achieved changes/s)."""
        threads = int(min(64, max(4, rate // 4)))
        start = time.monotonic() + 0.2
        done = {}

        def sender(first):
            for k in range(first, len(names), threads):
                delay = start + k / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)  # the load generator's pacing, not synchronisation
                done[names[k]] = self.patch_seq(namespace, names[k], seq)
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(sender, range(threads)))
        span = time.monotonic() - start
        return done, (len(names) / span if span > 0 else float("inf"))

    def write_counts(self):
        """{(verb, resource): count} of the API server's completed write requests so far."""
        counts = {}
        for line in self.request("GET", "/metrics", raw=True).splitlines():
            if not line.startswith("apiserver_request_total{"):
                continue
            labels = dict(part.split("=", 1) for part in line[line.index("{") + 1:line.rindex("}")].split(","))
            verb = labels.get("verb", "").strip('"')
            resource = labels.get("resource", "").strip('"')
            if verb in WRITE_VERBS and resource not in SERVER_OWN_RESOURCES:
                key = (verb, resource)
                counts[key] = counts.get(key, 0) + float(line.rsplit(" ", 1)[1])
        return counts

    def settled_write_counts(self, quiet_seconds=1.0, timeout=30):
        """write_counts() once two reads `quiet_seconds` apart agree (writes still in flight land)."""
        deadline = time.monotonic() + timeout
        last = self.write_counts()
        while time.monotonic() < deadline:
            time.sleep(quiet_seconds)  # polling the server's counters until they stop moving
            now = self.write_counts()
            if now == last:
                return now
            last = now
        return last

    def server_version(self):
        v = self.request("GET", "/version")
        return f"{v['major']}.{v['minor']}"


def write_delta(before, after):
    """The writes between two write_counts(), as {(verb, resource): n}, zero entries left out."""
    return {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)}
