"""make bench-live: live sessions on this machine, against the release binary.

Prints, for 1,000 and 10,000 subscribers of one session: commit-to-last-subscriber latency
(p50, p99 over 40 commits: from sending the update to the moment the last subscriber has
read its event), the memory the idle subscribers hold (RSS before and after, and so
subscribers per GiB), and what the subscribers add to a commit's own answer time. Then /diff
with Redis paused and 32 session requests waiting on it. Then what one hostile client can
take: 1,000 streams opened, read and closed in a loop against --max-subscribers 500, and how
many of the 500 slots another client finds free right after; and 100 long polls of a 12 MB
session whose clients never read, with the memory they make the server hold. Figures only;
nothing is asserted.
"""
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/livedelta"
subscribers_binary = os.path.join(os.path.dirname(binary), "LiveSubscribers")
# Printed as measured, not at the end.
sys.stdout.reconfigure(line_buffering=True)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(extra=(), base=None):
    port = free_port()
    # Streams are counted apart from request connections; few of those leave the descriptors
    # (the hard limit) to the streams. One address opens every subscriber here, at once.
    base = base if base is not None else ["--max-subscribers", "20000", "--max-subscribers-per-session", "20000", "--max-connections", "1000",
                                          "--max-connections-per-client", "21000", "--stream-opens-per-second", "0",
                                          "--max-subscribers-per-tenant", "20000"]
    process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", *base, *extra],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return process, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the server did not start")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Connection:
    """One HTTP/1.1 keep-alive connection for small requests."""

    def __init__(self, port):
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def request(self, method, path, body=b""):
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        self.socket.sendall(head.encode() + body)
        data = b""
        while b"\r\n\r\n" not in data:
            data += self.socket.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int([line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")][0])
        while len(rest) < length:
            rest += self.socket.recv(65536)
        return rest


def items(round_):
    return json.dumps({"items": [{"id": i, "round": round_ if i == round_ % 50 else 0} for i in range(50)]}).encode()


def live(count):
    process, port = start()
    writer = Connection(port)
    version = json.loads(writer.request("PUT", "/sessions/bench", items(0)))["version"]
    base_rss = rss_kib(process.pid)
    alone = []
    for round_ in range(1, 41):
        started = time.perf_counter()
        version = json.loads(writer.request("POST", "/sessions/bench/update", items(round_)))["version"]
        alone.append(time.perf_counter() - started)
    # The subscribers are held and read by a compiled client (Benchmarks/LiveSubscribers):
    # it says `ready` when every one has its reset, and runs the commits on a line from here.
    client = subprocess.Popen([subscribers_binary, str(port), "bench", str(count), "40", str(version)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = client.stdout.readline().split()
    held = int(ready[1]) if len(ready) == 2 else 0
    idle_rss = rss_kib(process.pid)
    client.stdin.write("go\n")
    client.stdin.flush()
    figures = json.loads(client.stdout.readline())
    client.wait()
    process.terminate()
    process.wait()
    latencies, firsts, answers = sorted(figures["last"]), sorted(figures["first"]), figures["answer"]
    per_subscriber = (idle_rss - base_rss) * 1024 / max(held, 1)
    print(f"{count} subscribers of one session ({held} held), 40 commits of a 50-item list (keyed):")
    if latencies:
        print(f"  commit to last subscriber: p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms"
              f" (to the first: p50 {statistics.median(firsts) * 1000:.1f} ms; one reader thread, on the server's cores)")
    print(f"  RSS {base_rss / 1024:.0f} MiB before, {idle_rss / 1024:.0f} MiB with them idle: {per_subscriber / 1024:.1f} KiB each,"
          f" {int((1 << 30) / max(per_subscriber, 1)):,} per GiB")
    print(f"  the update's own answer: p50 {statistics.median(alone) * 1000:.2f} ms without subscribers,"
          f" {statistics.median(answers) * 1000:.2f} ms with them"
          f" ({(statistics.median(answers) - statistics.median(alone)) * 1e6 / max(held, 1):.2f} µs a subscriber)")


def percentile(values, fraction):
    """The nearest-rank percentile of sorted `values`."""
    return values[max(0, min(len(values) - 1, int(round(fraction * len(values))) - 1))]


def paused_redis():
    directory = tempfile.mkdtemp()
    redis_port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no", "--dir", directory],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    process, port = start(["--session-store", f"redis://127.0.0.1:{redis_port}", "--redis-timeout", "5000"])
    Connection(port).request("PUT", "/sessions/p", items(0))

    def diff_latencies():
        connection = Connection(port)
        durations = []
        for _ in range(1000):
            started = time.perf_counter()
            connection.request("POST", "/diff", b'{"old":[1,2,3,4],"new":[4,1,2,5]}')
            durations.append(time.perf_counter() - started)
        durations.sort()
        return statistics.median(durations) * 1000, durations[989] * 1000

    running = diff_latencies()
    os.kill(redis.pid, 19)  # SIGSTOP
    waiting = [threading.Thread(target=lambda: _quiet(lambda: Connection(port).request("GET", "/sessions/p"))) for _ in range(32)]
    for thread in waiting:
        thread.start()
    time.sleep(0.2)
    paused = diff_latencies()
    os.kill(redis.pid, 18)  # SIGCONT
    for thread in waiting:
        thread.join()
    process.terminate()
    redis.terminate()
    print("/diff of 4 items, 1,000 requests on one connection:")
    print(f"  Redis running: p50 {running[0]:.2f} ms, p99 {running[1]:.2f} ms")
    print(f"  Redis paused, 32 session requests waiting on it: p50 {paused[0]:.2f} ms, p99 {paused[1]:.2f} ms")


def _quiet(body):
    try:
        body()
    except OSError:
        pass


def open_stream(port, path, source):
    """A stream from `source`: its status, and the socket after the first event (or refusal)."""
    connection = socket.socket()
    connection.bind((source, 0))
    connection.connect(("127.0.0.1", port))
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
    data = b""
    while b"event: reset" not in data and b'"error"' not in data:
        chunk = connection.recv(65536)
        if not chunk:
            break
        data += chunk
    return int(data[9:12] or 0), connection


def open_close_loop():
    for label, extra in [("no rate limit, so slots are freed by the close alone", ["--stream-opens-per-second", "0"]),
                         ("the default rate limit (20 a second, 60 at once)", [])]:
        process, port = start(base=["--max-subscribers", "500", "--max-connections-per-client", "1500", *extra])
        Connection(port).request("PUT", "/sessions/a", b'{"items":[1,2,3]}')
        Connection(port).request("PUT", "/sessions/b", b'{"items":[1,2,3]}')
        statuses = {}
        started = time.perf_counter()
        for _ in range(1000):
            status, connection = open_stream(port, "/sessions/a/events", "127.0.0.2")
            statuses[status] = statuses.get(status, 0) + 1
            connection.close()
        elapsed = time.perf_counter() - started
        # Another client, from its own address, takes what it can right after (at its own rate,
        # where there is one): every 503 would be a slot the loop still held.
        held, others = [], {}
        for _ in range(500):
            status, connection = open_stream(port, "/sessions/b/events", "127.0.0.3")
            others[status] = others.get(status, 0) + 1
            if status == 200:
                held.append(connection)
            else:
                connection.close()
        print(f"1,000 streams opened, read and closed by one client, {label}:")
        print(f"  {elapsed:.2f} s; answers {dict(sorted(statuses.items()))}")
        print(f"  another client right after, 500 streams: answers {dict(sorted(others.items()))};"
              f" refused for want of a slot (503): {others.get(503, 0)}")
        for connection in held:
            connection.close()
        process.terminate()
        process.wait()


def unread_long_polls():
    process, port = start(base=["--stream-opens-per-second", "0"])
    body = json.dumps({"items": [{"id": n, "text": "x" * 100} for n in range(99_999)]}).encode()
    Connection(port).request("PUT", "/sessions/big", body)
    # One poll read whole: the reset is rendered once, before the memory is read.
    urllib.request.urlopen(f"http://127.0.0.1:{port}/sessions/big/changes", timeout=30).read()
    before = rss_kib(process.pid)
    polls = []
    for _ in range(100):
        poll = socket.socket()
        poll.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        poll.connect(("127.0.0.1", port))
        poll.sendall(b"GET /sessions/big/changes HTTP/1.1\r\nHost: x\r\n\r\n")
        polls.append(poll)
    time.sleep(2)
    after = rss_kib(process.pid)
    print(f"100 long polls of a {len(body) / 1e6:.1f} MB session whose clients never read:")
    print(f"  RSS {before / 1024:.0f} MiB before, {after / 1024:.0f} MiB with them waiting: {(after - before) / 1024:.0f} MiB held for them")
    for poll in polls:
        poll.close()
    process.terminate()
    process.wait()


# Parts may be named (`1000`, `10000`, `paused`, `loop`, `polls`); all run where none is.
parts = sys.argv[2:] or ["1000", "10000", "paused", "loop", "polls"]
for part in parts:
    if part == "paused":
        paused_redis()
    elif part == "loop":
        open_close_loop()
    elif part == "polls":
        unread_long_polls()
    else:
        live(int(part))
