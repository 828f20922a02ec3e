"""Idempotency-Keys under a memory bound: 100,000 writes with distinct keys to the real binary,
the server's resident memory printed as they go, with the keys' bound at 16 MiB and, to compare,
at 1 GiB (every key kept); then 100,000 writes refused (412, a stale If-Match) with distinct
keys, which must leave nothing behind. Prints figures; asserts nothing.

usage: keys.py BINARY"""
import http.client
import json
import os
import socket
import subprocess
import sys
import time

binary = sys.argv[1]
WRITES = 100_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run(bound, refused=False):
    port = free_port()
    server = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
                               "--idempotency-max-bytes", str(bound), "--idempotency-max-bytes-per-tenant", str(bound)])
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    connection = http.client.HTTPConnection("127.0.0.1", port)
    body = json.dumps({"items": [{"id": i, "title": f"item {i}"} for i in range(5)]})
    started = time.time()
    figures = [(0, rss(server.pid))]
    if refused:
        connection.request("PUT", "/sessions/keys", body=body, headers={"Content-Type": "application/json"})
        connection.getresponse().read()
    for write in range(1, WRITES + 1):
        headers = {"Content-Type": "application/json", "Idempotency-Key": f"key-{write}"}
        if refused:
            headers["If-Match"] = '"7"'
        connection.request("POST" if refused else "PUT", "/sessions/keys/update" if refused else "/sessions/keys", body=body, headers=headers)
        answer = connection.getresponse()
        answer.read()
        assert answer.status in ((412,) if refused else (200, 201)), answer.status
        if write % 25_000 == 0:
            figures.append((write, rss(server.pid)))
    elapsed = time.time() - started
    server.terminate()
    server.wait()
    return figures, elapsed


for bound in [16 << 20, 1 << 30]:
    figures, elapsed = run(bound)
    steps = ", ".join(f"{count:,} keys: {mib:.0f} MiB" for count, mib in figures)
    print(f"idempotency keys, bound {bound >> 20} MiB: resident memory {steps} ({WRITES / elapsed:,.0f} writes/s)")
figures, elapsed = run(16 << 20, refused=True)
steps = ", ".join(f"{count:,} keys: {mib:.0f} MiB" for count, mib in figures)
print(f"idempotency keys of refused writes (412): resident memory {steps} ({WRITES / elapsed:,.0f} writes/s)")
