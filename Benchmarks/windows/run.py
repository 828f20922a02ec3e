"""make bench-windows: live windows of a 1,000,000-item session, memory store and Redis.

Prints: a 50-row window's first read (GET, p50 over 200 offsets, and over 200 keyset anchors;
on Redis, also on a second replica that holds no copy) and its reset on the wire;
a 10-row scroll of it on the wire (batch with rows=changed, and keyed); 10,000 subscribers on distinct keyset windows and a
one-item commit outside all of them (the server's CPU per commit beside the same commit with
no subscribers; the rows they were sent: none; and the fan-out threads' CPU per commit, whole
and once the totals, at most one a window a second, are priced from a quiet tail and taken
out); a commit inside 100 of them (to the last of those, p50 and p99 over 40 commits); 10,000
offset windows and an insert at the top, which shifts every one (to the last subscriber, p50
and p99 over 40; the server's CPU per commit, and its fan-out threads'), and beside it what
the kernel alone takes to carry as many events of that size from two sending threads to the
same reader, with no server (the floor of that figure on this machine).
Figures only; nothing is asserted. Needs redis-server for the Redis part.
"""
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/livedelta"
helper = os.path.join(os.path.dirname(binary), "WindowSubscribers")
sys.stdout.reconfigure(line_buffering=True)
# Descriptors for 10,000 subscribers on both ends (the floor holds both in one process): the
# hard limit raised where this may (as root), else the soft one to it.
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(hard, 65_536), max(hard, 65_536)))
except (ValueError, OSError):
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
ITEMS = int(os.environ.get("ITEMS", 1_000_000))
SUBSCRIBERS = int(os.environ.get("SUBSCRIBERS", 10_000))
TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(extra=()):
    port = free_port()
    # Limits raised for 10,000 subscribers and a million items; the history is the default
    # (64 MB: one step of this session). A larger one holds more lists, and a feed just started
    # (each run's subscribers join a new one) maps a fresh 40 MB list for each commit until
    # its history is full: with 1 GB, the first 13 commits of a run took 100 to 150 ms each.
    # Streams and other connections each take a descriptor, and the server lowers both where
    # they would not fit (with 21,000 connections asked beside the streams and 20,000
    # descriptors, it held 9,725 subscribers): 8,000 connections besides the streams, and
    # each run waits for the last one's subscribers to be gone (`helper_run`).
    flags = ["--max-subscribers", "11000", "--max-subscribers-per-session", "11000", "--max-subscribers-per-tenant", "11000",
             "--max-connections", "8000", "--max-connections-per-client", "19000", "--stream-opens-per-second", "0",
             "--max-session-items", "2000000", "--max-body-size", "100000000", "--max-session-bytes", str(8 << 30),
             "--max-session-bytes-per-tenant", str(8 << 30)]
    process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", *flags, *extra],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return process, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the server did not start")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def fan_out_seconds(pid):
    """CPU of the threads that move windows and render their events: the fan-out pool, and
    Dispatch's workers it spreads a large pass over (not the commit's, nor the sockets')."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as comm:
                name = comm.read().strip()
            if name != "live-fanout" and "default-qos" not in name:
                continue
            # schedstat's first field: nanoseconds on a CPU (ticks are too coarse for this).
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except OSError:
            continue
    return total / 1e9


class Connection:
    """One HTTP/1.1 keep-alive connection."""

    def __init__(self, port):
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def request(self, method, path, body=b""):
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        self.socket.sendall(head.encode() + body)
        data = b""
        while b"\r\n\r\n" not in data:
            data += self.socket.recv(1 << 20)
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int([line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")][0])
        while len(rest) < length:
            rest += self.socket.recv(1 << 20)
        status = int(head.split(b" ", 2)[1])
        if status >= 400:
            raise SystemExit(f"{method} {path} answered {status}: {rest[:500].decode(errors='replace')}")
        return json.loads(rest)


def first_event(port, path, headers=""):
    """The first event a stream sends (after `retry:`), as the bytes it takes on the wire."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode())
        data = b""
        while True:
            data += s.recv(1 << 16)
            body = data.partition(b"\r\n\r\n")[2]
            # Chunked: the event is the chunk after the one with `retry:`.
            text = body.replace(b"\r\n", b"\n")
            events = [part for part in text.split(b"\n\n") if b"event:" in part]
            if events:
                event = events[0]
                return len(event) + 2, event


def percentile(values, fraction):
    values = sorted(values)
    return values[max(0, min(len(values) - 1, int(round(fraction * len(values))) - 1))]


def create(port):
    items = [{"id": i, "title": f"row {i}", "v": 0} for i in range(ITEMS)]
    started = time.perf_counter()
    answer = Connection(port).request("PUT", "/sessions/big", json.dumps({"items": items}, separators=(",", ":")).encode())
    return answer["version"], time.perf_counter() - started


def timed_reads(connection, query, first_id):
    """200 reads of 50 rows spread over the list, `query` placing each from a spot k; each
    read's first row must be item `first_id(k)`."""
    latencies = []
    for k in range(200):
        spot = (k * 7919) % (ITEMS - 50)
        started = time.perf_counter()
        answer = connection.request("GET", f"/sessions/big?{query(spot)}&limit=50")
        latencies.append(time.perf_counter() - started)
        assert len(answer["items"]) == 50 and answer["items"][0]["id"] == first_id(spot)
    return latencies


def reads(port, store):
    connection = Connection(port)
    latencies = timed_reads(connection, lambda spot: f"offset={spot}", lambda spot: spot)
    # Keyset: after an item's id, anywhere in the list (the anchor found by id).
    keyset = timed_reads(connection, lambda spot: f"after={spot}", lambda spot: spot + 1)
    middle = ITEMS // 2
    size, reset = first_event(port, f"/sessions/big/events?format=keyed&offset={middle}&limit=50")
    token = [line for line in reset.split(b"\n") if line.startswith(b"id: ")][0][4:].decode()
    scroll, _ = first_event(port, f"/sessions/big/events?format=keyed&offset={middle + 10}&limit=50", f"Last-Event-ID: {token}\r\n")
    # batch with rows=changed: the delta's positions and only the 10 rows that enter.
    compact, _ = first_event(port, f"/sessions/big/events?format=batch&rows=changed&offset={middle + 10}&limit=50",
                             f"Last-Event-ID: {token}\r\n")
    print(f"  {store}: a 50-row window's first read p50 {statistics.median(latencies) * 1000:.2f} ms, p99 {percentile(latencies, 0.99) * 1000:.2f} ms"
          f" (the first {latencies[0] * 1000:.1f} ms); keyset (after an id) p50 {statistics.median(keyset) * 1000:.2f} ms,"
          f" p99 {percentile(keyset, 0.99) * 1000:.2f} ms; its reset {size} bytes on the wire; a 10-row scroll {compact} bytes"
          f" (batch, rows=changed; keyed {scroll})")


def cold_reads(extra):
    """The same reads on a second replica that holds no copy of the session: from the parts
    that hold each window (a keyset window's anchor found by the ids' hashes beside them)."""
    process, port = start(extra)
    try:
        connection = Connection(port)
        offset = timed_reads(connection, lambda spot: f"offset={spot}", lambda spot: spot)
        keyset = timed_reads(connection, lambda spot: f"after={spot}", lambda spot: spot + 1)
        print(f"  a replica with no copy: a 50-row window's read p50 {statistics.median(offset) * 1000:.2f} ms,"
              f" p99 {percentile(offset, 0.99) * 1000:.2f} ms; keyset p50 {statistics.median(keyset) * 1000:.2f} ms,"
              f" p99 {percentile(keyset, 0.99) * 1000:.2f} ms")
    finally:
        process.terminate()
        process.wait()


def live_subscribers(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith("livedelta_live_subscribers"):
            return int(float(line.split()[-1]))
    raise SystemExit("no livedelta_live_subscribers in /metrics")


def helper_run(port, version, kind, mode, rounds, pid):
    # The last run's subscribers are gone first: the server holds 11,000 streams (what its
    # descriptors fit beside other connections), not two runs' 10,000 each.
    deadline = time.monotonic() + 120
    while True:
        try:
            if live_subscribers(port) == 0:
                break
        except urllib.error.HTTPError as error:
            # Busy (503, retry): the last run's connections are still being closed.
            if error.code != 503:
                raise
        if time.monotonic() > deadline:
            raise SystemExit("the last run's subscribers were still held after 120 s")
        time.sleep(0.05)
    # The subscribers join together, as after a restart: the time until all are in, and the
    # server's CPU for it.
    join_start, join_cpu = time.monotonic(), cpu_seconds(pid)
    client = subprocess.Popen([helper, str(port), "big", str(SUBSCRIBERS), kind, "100", mode, str(rounds), str(version)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = client.stdout.readline().split()
    joined = (time.monotonic() - join_start, cpu_seconds(pid) - join_cpu)
    # The commits are timed once the server is done with the joins (its CPU all but idle for
    # half a second): 10,000 subscribers join in about a second, and work they leave (their
    # first passes, the totals) would otherwise be counted against the first commits.
    deadline, last = time.monotonic() + 60, cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = cpu_seconds(pid)
        spent, last = now - last, now
        if spent < 0.05:
            break
    before = cpu_seconds(pid)
    fan_before = fan_out_seconds(pid)
    client.stdin.write("go\n")
    client.stdin.flush()
    line = client.stdout.readline()
    while line and line.strip() != "committed":
        line = client.stdout.readline()
    if not line:
        raise SystemExit(f"WindowSubscribers {kind} {mode} stopped (exit {client.wait()})")
    tail = None
    if mode == "outside":
        # Up to `tail`: the commits and the totals they brought (all counted); then the totals
        # the commits left pending, sent with no commit running: what a total costs.
        assert client.stdout.readline().strip() == "tail"
    spent = cpu_seconds(pid) - before
    fan_spent = fan_out_seconds(pid) - fan_before
    fan_tail = None
    if mode == "outside":
        tail_start, fan_tail_start = cpu_seconds(pid), fan_out_seconds(pid)
        assert client.stdout.readline().strip() == "quiet"
        tail = cpu_seconds(pid) - tail_start
        fan_tail = fan_out_seconds(pid) - fan_tail_start
    figures = json.loads(client.stdout.readline())
    client.wait()
    figures["held"] = int(ready[1]) if len(ready) == 2 else 0
    figures["joined"] = joined
    figures["cpu"] = spent
    figures["tail"] = tail
    figures["fan"] = fan_spent
    figures["fanTail"] = fan_tail
    return figures


def loopback_floor(count, size, rounds=40):
    """What the kernel alone takes to carry `count` events of `size` bytes: two threads send
    them over loopback sockets to the same reader as the subscribers' (no server)."""
    count = min(count, (resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64) // 2)
    run_ = subprocess.run([helper, "floor", str(count), str(size), str(rounds)], capture_output=True, text=True, check=True)
    figures = json.loads(run_.stdout)
    return count, figures["last"]


def outside_alone(port, rounds):
    """The same one-item commits as `outside`, with no subscribers: what a commit costs itself."""
    connection = Connection(port)
    version = None
    for round_ in range(1, rounds + 1):
        id_ = (round_ * 7 % SUBSCRIBERS) * 100 + 75
        body = json.dumps({"operations": [{"op": "update", "id": id_, "item": {"id": id_, "title": f"row {id_}", "v": round_}}]})
        version = connection.request("POST", "/sessions/big/changes", body.encode())["version"]
    return version


def run(store, extra=()):
    process, port = start(extra)
    try:
        version, seconds = create(port)
        print(f"{store} store: {ITEMS:,} items created in {seconds:.1f} s")
        reads(port, store)
        if extra:
            cold_reads(extra)
        rounds = 50
        before = cpu_seconds(process.pid)
        version = outside_alone(port, rounds)
        alone = (cpu_seconds(process.pid) - before) / rounds
        figures = helper_run(port, version, "after", "outside", rounds, process.pid)
        version += rounds
        print(f"  {SUBSCRIBERS:,} subscribers on keyset windows joined together in {figures['joined'][0]:.1f} s,"
              f" {figures['joined'][1]:.1f} s of the server's CPU")
        # Each window's total goes at most once a second whatever the commits: its cost is
        # priced from the quiet tail and taken out, leaving what each commit adds; on the
        # fan-out threads alone, as the commit's own CPU (a million-item copy) varies more
        # from run to run than the fan-out is.
        per_total = figures["tail"] / max(figures["tailWindows"], 1)
        fan_per_total = figures["fanTail"] / max(figures["tailWindows"], 1)
        fan_out = (figures["fan"] - figures["windows"] * fan_per_total) / rounds
        print(f"  {figures['held']:,} keyset windows, a one-item commit outside all of them: {figures['cpu'] / rounds * 1000:.2f} ms of CPU"
              f" a commit ({alone * 1000:.2f} ms with no subscribers; {TICKS} ticks a second); rows sent: {figures['deltas']} deltas;"
              f" {figures['windows']:,} totals (window events) sent while they ran, at {per_total * 1e6:.1f} us each"
              f" ({figures['tailWindows']:,} sent in a quiet 1.5 s after); fan-out threads {figures['fan'] / rounds * 1000:.2f} ms a commit,"
              f" {fan_out * 1000:.2f} ms beyond the totals")
        figures = helper_run(port, version, "after", "inside", 40, process.pid)
        version += 40
        last = figures["last"]
        print(f"  a commit inside 100 of them: to the last of those p50 {statistics.median(last) * 1000:.1f} ms,"
              f" p99 {percentile(last, 0.99) * 1000:.1f} ms (answer p50 {statistics.median(figures['answer']) * 1000:.1f} ms)")
        figures = helper_run(port, version, "offset", "top", 40, process.pid)
        last = figures["last"]
        print(f"  {figures['held']:,} offset windows, an insert at the top (every window shifts): to the last subscriber"
              f" p50 {statistics.median(last) * 1000:.1f} ms, p99 {percentile(last, 0.99) * 1000:.1f} ms"
              f" (to the first p50 {statistics.median(figures['first']) * 1000:.1f} ms; {figures['bytes'] / 40 / max(figures['held'], 1):.0f} bytes a window a commit;"
              f" the server's CPU {figures['cpu'] / 40 * 1000:.1f} ms a commit, {figures['fan'] / 40 * 1000:.1f} ms of it in the fan-out threads)")
        if not extra:
            size = round(figures["bytes"] / 40 / max(figures["held"], 1))
            count, last = loopback_floor(figures["held"], size)
            print(f"  the kernel's part alone: two threads that only send {size} bytes to each of {count:,} loopback sockets,"
                  f" read by the same reader: to the last p50 {statistics.median(last) * 1000:.1f} ms, p99 {percentile(last, 0.99) * 1000:.1f} ms")
    finally:
        process.terminate()
        process.wait()


run("memory")
if os.environ.get("STORES") == "memory":
    raise SystemExit(0)
directory = tempfile.mkdtemp()
redis_port = free_port()
redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no", "--dir", directory],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    time.sleep(0.5)
    run("Redis", ["--session-store", f"redis://127.0.0.1:{redis_port}"])
finally:
    redis.terminate()
    redis.wait()
