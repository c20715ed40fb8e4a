"""A replaying API server for test/bench/throughput.py: serves one widgets collection over plain
HTTP on 127.0.0.1, an empty list at resourceVersion 1, then a watch stream that replays a
prepared sequence of events (lines of the watch stream, as the real API server writes them) as
fast as the client reads them. The driver appends events with publish(); a watch that has sent
everything waits for more. Unknown paths get 404 and are counted, so the bench notices requests
it did not expect."""

import http.server
import json
import threading
import urllib.parse

PATH = "/apis/example.com/v1/widgets"


def widget(index, uid, resource_version, generation, size):
    """A widget shaped like the ones the real API server sends (managedFields included), so the
    agent parses as many bytes per event as it would in a cluster."""
    name = f"w{index:05d}"
    return {
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {
            "creationTimestamp": "2026-11-30T12:00:00Z", "generation": generation,
            "managedFields": [{"apiVersion": "example.com/v1", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:spec": {".": {}, "f:payload": {}, "f:size": {}}},
                               "manager": "bench", "operation": "Update", "time": "2026-11-30T12:00:00Z"}],
            "name": name, "namespace": "bench", "resourceVersion": str(resource_version), "uid": uid,
        },
        "spec": {"payload": "x" * 200, "size": size},
    }


class ReplayServer:
    def __init__(self):
        self._cv = threading.Condition()
        self._events = []  # (resource version, encoded line)
        self.unexpected = []
        self.watches = 0
        self.refused_streaming_lists = 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                if url.path != PATH:
                    server.unexpected.append(self.path)
                    return self._send(404, {"kind": "Status", "code": 404})
                if "sendInitialEvents" in query:
                    # As a server without the WatchList feature answers: the agent falls back to a
                    # paginated list at once (this server's stream never sends the initial-events-end
                    # bookmark, so a streaming list would wait for its timeout).
                    server.refused_streaming_lists += 1
                    return self._send(422, {"kind": "Status", "code": 422, "reason": "Invalid",
                                            "message": "sendInitialEvents: Forbidden: not supported"})
                if query.get("watch", ["false"])[0] in ("true", "1"):
                    return server._stream(self, int(query.get("resourceVersion", ["0"])[0] or 0))
                body = {"kind": "WidgetList", "apiVersion": "example.com/v1",
                        "metadata": {"resourceVersion": "1"}, "items": []}
                self._send(200, body)

            def do_POST(self):  # Events the agent may post
                server.unexpected.append("POST " + self.path)
                length = int(self.headers.get("Content-Length", 0))
                self.rfile.read(length)
                self._send(201, {})

            def _send(self, code, body):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._stopping = False
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def publish(self, events):
        """Appends (type, object) pairs; watches send them at once."""
        with self._cv:
            for event_type, obj in events:
                rv = int(obj["metadata"]["resourceVersion"])
                line = json.dumps({"type": event_type, "object": obj}, separators=(",", ":")) + "\n"
                self._events.append((rv, line.encode()))
            self._cv.notify_all()

    def stop(self):
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        self.httpd.shutdown()

    def _stream(self, handler, since):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        with self._cv:
            self.watches += 1
            sent = sum(1 for rv, _ in self._events if rv <= since)
        try:
            while True:
                with self._cv:
                    self._cv.wait_for(lambda: self._stopping or len(self._events) > sent)
                    if self._stopping:
                        return
                    batch = self._events[sent:sent + 500]
                sent += len(batch)
                data = b"".join(line for _, line in batch)
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return

    def kubeconfig(self):
        return (f"apiVersion: v1\nkind: Config\nclusters:\n- name: replay\n  cluster:\n"
                f"    server: http://127.0.0.1:{self.port}\nusers:\n- name: bench\n  user: {{}}\n"
                f"contexts:\n- name: replay\n  context:\n    cluster: replay\n    user: bench\n"
                f"current-context: replay\n")
