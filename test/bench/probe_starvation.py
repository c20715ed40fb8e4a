"""Benchmark: /healthz while one client tries to starve the probe port (issue 8, item 5).

Starts one agent (its API server unreachable on purpose: the probe listener does not need it),
then, from one client address (--attacker, default 127.0.0.2: a pod; 127.0.0.1 plays an attacker
sharing the kubelet's node address), holds --idle idle connections (each sent half a request
line, reopened as soon as the agent closes one) and runs --slowloris connections that trickle
one byte every 0.5 s. Meanwhile it sends --probes
/healthz requests, one per --interval seconds, each on a fresh connection with a 1 s timeout as
kubelet does, and prints how many succeeded and their latency.

usage: python3 test/bench/probe_starvation.py [--attacker 127.0.0.2] [--idle 300] [--slowloris 50] [--probes 56] [--interval 0.5]
Needs NODEHOOK_BIN or build/agent/app/nodehook.
"""

import argparse
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def start_agent(directory):
    kubeconfig = directory / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
                          "users:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n"
                          "    user: u\ncurrent-context: x\n")
    config = {"node_name": "bench", "state_file": str(directory / "state.db"), "api": {"kubeconfig": str(kubeconfig)},
              "resources": [{"group": "example.com", "version": "v1", "plural": "widgets",
                             "hooks": {"create": {"argv": ["/bin/true"]}}}],
              "tuning": {"health_address": "127.0.0.1:0", "admin_address": "127.0.0.1:0"}}
    (directory / "config.json").write_text(json.dumps(config))
    binary = os.environ.get("NODEHOOK_BIN", str(REPO / "build/agent/app/nodehook"))
    log = open(directory / "agent.log", "wb")
    proc = subprocess.Popen([binary, "run", "--config", str(directory / "config.json")], stderr=log,
                            stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in (directory / "agent.log").read_text().splitlines():
            if 'event="health endpoints listening"' in line:
                return proc, int(line.split(" port=")[1].split()[0])
        time.sleep(0.05)
    raise SystemExit("the agent did not start listening; see " + str(directory / "agent.log"))


def probe(port):
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.settimeout(1)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            while chunk := s.recv(4096):
                answer += chunk
        ok = answer.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return ok, time.monotonic() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attacker", default="127.0.0.2")
    parser.add_argument("--idle", type=int, default=300)
    parser.add_argument("--slowloris", type=int, default=50)
    parser.add_argument("--probes", type=int, default=56)
    parser.add_argument("--interval", type=float, default=0.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_agent(Path(tmp))
        stop = threading.Event()
        held = []

        def attack():
            # Keeps --idle connections open, reopening any the agent closes.
            while not stop.is_set():
                while len(held) < args.idle:
                    s = socket.create_connection(("127.0.0.1", port), source_address=(args.attacker, 0))
                    s.sendall(b"GET /heal")
                    held.append(s)
                time.sleep(0.01)
                for s in list(held):
                    s.setblocking(False)
                    try:
                        if s.recv(1, socket.MSG_PEEK) == b"":
                            held.remove(s)
                            s.close()
                    except BlockingIOError:
                        pass
                    except OSError:
                        held.remove(s)
                        s.close()

        def slowloris():
            conns = []
            while not stop.is_set():
                while len(conns) < args.slowloris:
                    conns.append(socket.create_connection(("127.0.0.1", port), source_address=(args.attacker, 0)))
                for s in list(conns):
                    try:
                        s.sendall(b"X")
                    except OSError:
                        conns.remove(s)
                        s.close()
                time.sleep(0.5)

        threads = [threading.Thread(target=attack, daemon=True), threading.Thread(target=slowloris, daemon=True)]
        for t in threads:
            t.start()
        time.sleep(2)
        results = []
        for _ in range(args.probes):
            results.append(probe(port))
            time.sleep(args.interval)
        stop.set()
        proc.terminate()
        proc.wait(timeout=30)
    latencies = sorted(t for ok, t in results if ok)
    print(f"probes ok: {len(latencies)}/{len(results)} with {args.idle} idle and {args.slowloris} slowloris "
          f"connections from {args.attacker}, probes from 127.0.0.1")
    if latencies:
        print(f"latency ms: median {1000 * latencies[len(latencies) // 2]:.1f}, max {1000 * latencies[-1]:.1f}")


if __name__ == "__main__":
    main()
