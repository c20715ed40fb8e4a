"""A network namespace the test makes for agents that pose as pods (test_fleet.py): pod addresses
exist only there, never in the machine's own namespace.

    PodNetwork(addresses=3) -> .name (run agents with `ip netns exec NAME`), .pod_ips

One namespace `nhpod-<pid>-<n>` joined to the root namespace by a veth pair on a free
10.250.N.0/24: the root end is 10.250.N.1 (so the API server's pod proxy reaches the pods through
it), the namespace end carries the pod addresses 10.250.N.2, .3, ... And because an agent in the
namespace cannot reach the API server on the machine's 127.0.0.1, `forward_loopback(port)` makes
127.0.0.1:port inside the namespace lead to 127.0.0.1:port outside: a helper in the namespace
binds the listening socket and hands it over (SCM_RIGHTS), and this process relays each
connection. Needs root. `close()` deletes the namespace (and with it the veth pair)."""

import itertools
import os
import socket
import subprocess
import sys
import threading

_ids = itertools.count(1)

# Runs inside the namespace: binds 127.0.0.1:PORT and sends the listening socket over fd FD.
_BIND_AND_SEND = """
import socket, sys
port, fd = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(64)
socket.send_fds(socket.socket(fileno=fd), [b"l"], [s.fileno()])
"""


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def _relay(src, dst):
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class PodNetwork:
    def __init__(self, addresses):
        self.name = f"nhpod-{os.getpid()}-{next(_ids)}"
        self._listeners = []
        self._veth = f"nhv{os.getpid() % 100000}-{next(_ids)}"[:15]
        subnet = self._free_subnet()
        _ip("netns", "add", self.name)
        try:
            _ip("link", "add", self._veth, "type", "veth", "peer", "name", "eth0", "netns", self.name)
            _ip("addr", "add", f"{subnet}.1/24", "dev", self._veth)
            _ip("link", "set", self._veth, "up")
            self.pod_ips = [f"{subnet}.{host}" for host in range(2, 2 + addresses)]
            for address in self.pod_ips:
                _ip("-n", self.name, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", self.name, "link", "set", "eth0", "up")
            _ip("-n", self.name, "link", "set", "lo", "up")
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _free_subnet():
        """10.250.N with N in 1-199 that no address or route here uses yet (real-node.sh takes 200+)."""
        used = _ip("-4", "route", "show", "table", "all").stdout + _ip("-4", "addr", "show").stdout
        for n in range(1, 200):
            if f"10.250.{n}." not in used:
                return f"10.250.{n}"
        raise RuntimeError("no free 10.250.N.0/24 for the pod network")

    @property
    def launcher(self):
        """The prefix that runs a command inside the namespace."""
        return ("ip", "netns", "exec", self.name)

    def forward_loopback(self, port):
        """Connections to 127.0.0.1:port inside the namespace reach 127.0.0.1:port outside."""
        ours, theirs = socket.socketpair()
        with ours, theirs:
            subprocess.run([*self.launcher, sys.executable, "-c", _BIND_AND_SEND, str(port), str(theirs.fileno())],
                           pass_fds=[theirs.fileno()], check=True, timeout=30)
            _, fds, _, _ = socket.recv_fds(ours, 1, 1)
        listener = socket.socket(fileno=fds[0])
        self._listeners.append(listener)
        threading.Thread(target=self._accept, args=(listener, port), daemon=True).start()

    @staticmethod
    def _accept(listener, port):
        while True:
            try:
                inside, _ = listener.accept()
            except OSError:
                return  # closed
            try:
                outside = socket.create_connection(("127.0.0.1", port))
            except OSError:
                inside.close()
                continue
            threading.Thread(target=_relay, args=(inside, outside), daemon=True).start()
            threading.Thread(target=_relay, args=(outside, inside), daemon=True).start()

    def close(self):
        for listener in self._listeners:
            # shutdown wakes the accepting thread; close alone would not.
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        _ip("netns", "del", self.name, check=False)
        _ip("link", "del", self._veth, check=False)
