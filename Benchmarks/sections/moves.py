"""Sectioned deltas when every item moves to another section: N one-item sections, each item
moved to the next section (the last to the first), diffed by POST /diff in each format against
the real binary. The time of each answer is printed (the median of three); a format whose cost
grew faster than N log N would show it as N doubles. Prints figures; asserts nothing.

usage: moves.py BINARY [N ...]"""
import http.client
import json
import socket
import statistics
import subprocess
import sys
import time

binary = sys.argv[1]
SIZES = [int(n) for n in sys.argv[2:]] or [50_000, 100_000, 200_000]
FORMATS = ["batch", "sequential", "keyed", "jsonPatch"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def body(n, format):
    old = [{"id": f"s{k}", "items": [{"id": k}]} for k in range(n)]
    new = [{"id": f"s{k}", "items": [{"id": (k + 1) % n}]} for k in range(n)]
    return json.dumps({"old": {"sections": old}, "new": {"sections": new}, "options": {"format": format, "dataCountAnimationThreshold": 100000000, "deltaCountAnimationThreshold": 100000000}})


port = free_port()
server = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
                           "--max-body-size", str(1 << 30), "--max-buffered-body-bytes", str(1 << 31)])
try:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    for n in SIZES:
        for format in FORMATS:
            text = body(n, format)
            times = []
            for _ in range(3):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
                started = time.perf_counter()
                connection.request("POST", "/diff", body=text, headers={"Content-Type": "application/json"})
                answer = connection.getresponse()
                payload = answer.read()
                times.append(time.perf_counter() - started)
                connection.close()
                assert answer.status == 200, (answer.status, payload[:300])
            print(f"{n:,} one-item sections, every item moved, {format}: {statistics.median(times) * 1000:,.0f} ms "
                  f"(answer {len(payload) / 1e6:.1f} MB)", flush=True)
finally:
    server.terminate()
    server.wait()
