"""make bench-cluster: commits a second for 1,000 small sessions, with a subscriber following
each, on one Redis and on a Redis Cluster of three masters (each with a replica), against the
release binary; and what each Redis process did for them.

Prints, for each store: commits a second (wrk, 32 connections, 10 s; every commit is logged and
announced, as every session is followed), the CPU the server and each Redis master spent a
commit, how many announcements each master carried (sharded on a cluster: a slot's announcement
goes to its master only), and the subscribing connections each master holds from the server.
On the cluster, then: a followed session's slot moved to another master, and how long after the
move its subscriber heard the next commit.
All processes share this machine's cores, so the figures say where the work goes, not what
more machines would give. Figures only; nothing is asserted.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "PythonSupport"))
from livedelta_testing import ServerProcess, redis_cluster, redis_server  # noqa: E402

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/livedelta"
sys.stdout.reconfigure(line_buffering=True)
SESSIONS, CONNECTIONS, SECONDS = 1_000, 32, 10
TICKS = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    """Seconds of CPU the process has used."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def redis_pid(port):
    info = subprocess.run(["redis-cli", "-p", str(port), "INFO", "server"], capture_output=True, text=True).stdout
    return int(re.search(r"process_id:(\d+)", info).group(1))


def masters(url):
    """The ports of the masters behind a store URL."""
    ports = [int(address.rsplit(":", 1)[1]) for address in url.split("//", 1)[1].split(",")]
    if url.startswith("redis://"):
        return ports
    return [port for port in ports
            if "role:master" in subprocess.run(["redis-cli", "-p", str(port), "INFO", "replication"], capture_output=True, text=True).stdout]


def announcements(port):
    """Announcements a node has carried: PUBLISH and SPUBLISH calls, scripts' included."""
    stats = subprocess.run(["redis-cli", "-p", str(port), "INFO", "commandstats"], capture_output=True, text=True).stdout
    return sum(int(calls) for calls in re.findall(r"cmdstat_s?publish:calls=(\d+)", stats))


def subscribers(port):
    clients = subprocess.run(["redis-cli", "-p", str(port), "CLIENT", "LIST"], capture_output=True, text=True).stdout
    return sum(1 for line in clients.splitlines() if re.search(r"cmd=s?subscribe\b", line) or "flags=P" in line)


def follow(port, session, stop):
    """A subscriber that keeps the stream open and reads it, so that the session stays followed."""
    for _ in range(100):
        try:
            connection = socket.create_connection(("127.0.0.1", port))
            break
        except ConnectionRefusedError:
            # The listen queue was full: a thousand connect at once.
            time.sleep(0.05)
    with connection:
        connection.sendall(f"GET /sessions/{session}/events?format=batch HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        connection.settimeout(0.5)
        while not stop.is_set():
            try:
                if not connection.recv(65536):
                    return
            except socket.timeout:
                pass


def subscribed(port):
    """The server's count of live subscribers."""
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
    found = re.search(r"^livedelta_live_subscribers (\d+)", metrics, re.M)
    return int(found.group(1)) if found else 0


def cli(port, *words):
    return subprocess.run(["redis-cli", "-p", str(port), *map(str, words)], capture_output=True, text=True, check=True).stdout.strip()


def move_slot(url, key):
    """Moves `key`'s slot to another master, as `redis-cli --cluster reshard` would."""
    nodes = masters(url)
    slot = int(cli(nodes[0], "CLUSTER", "KEYSLOT", key))
    source = next(port for port in nodes if int(cli(port, "CLUSTER", "COUNTKEYSINSLOT", slot)) > 0)
    target = next(port for port in nodes if port != source)
    source_id, target_id = cli(source, "CLUSTER", "MYID"), cli(target, "CLUSTER", "MYID")
    cli(target, "CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    cli(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    while keys := cli(source, "CLUSTER", "GETKEYSINSLOT", slot, 100).split():
        cli(source, "MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *keys)
    for port in nodes:
        cli(port, "CLUSTER", "SETSLOT", slot, "NODE", target_id)


def heard_again(port, url):
    """Moves a followed session's slot, then commits to it every 10 ms: the time from the end
    of the move to the first event its subscriber reads."""
    heard = []
    stop, reset = threading.Event(), threading.Event()

    def subscriber():
        with socket.create_connection(("127.0.0.1", port)) as connection:
            connection.sendall(b"GET /sessions/s0/events?format=batch HTTP/1.1\r\nHost: bench\r\n\r\n")
            connection.settimeout(0.05)
            while not stop.is_set():
                try:
                    chunk = connection.recv(65536)
                except socket.timeout:
                    continue
                if b"event: reset" in chunk:
                    reset.set()
                if b"event: delta" in chunk:
                    heard.append(time.monotonic())

    reader = threading.Thread(target=subscriber, daemon=True)
    reader.start()
    reset.wait(30)  # only deltas after the move count
    move_slot(url, "livedelta:{s0}")
    moved = time.monotonic()
    turn = 0
    while not [at for at in heard if at > moved] and time.monotonic() - moved < 30:
        turn += 1
        body = f'{{"items":[{turn},{turn + 1}]}}'.encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/sessions/s0/update", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request).read()
        time.sleep(0.01)
    stop.set()
    after = [at for at in heard if at > moved]
    return (after[0] - moved) * 1000 if after else None


def measure(name, url, folder):
    # One address opens every subscriber and every wrk connection.
    flags = ["--max-connections-per-client", "2000", "--stream-opens-per-second", "0", "--max-subscribers-per-tenant", "5000"]
    server = ServerProcess(binary, ["--session-store", url, "--log-level", "warning", *flags],
                           os.path.join(folder, f"{name.split()[0]}.log"))
    try:
        for index in range(SESSIONS):
            request = urllib.request.Request(f"http://127.0.0.1:{server.port}/sessions/s{index}", data=b'{"items":[1,2,3,4,5,6,7,8,9,10]}',
                                             method="PUT", headers={"Content-Type": "application/json"})
            urllib.request.urlopen(request).read()
        stop = threading.Event()
        followers = [threading.Thread(target=follow, args=(server.port, f"s{index}", stop), daemon=True) for index in range(SESSIONS)]
        for thread in followers:
            thread.start()
        deadline = time.monotonic() + 60
        while subscribed(server.port) < SESSIONS and time.monotonic() < deadline:
            time.sleep(0.05)
        nodes = masters(url)
        pids = {port: redis_pid(port) for port in nodes}
        before = {port: (cpu(pid), announcements(port)) for port, pid in pids.items()}
        server_before = cpu(server.process.pid)
        output = subprocess.run(
            ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "-s", "Benchmarks/cluster/commits.lua", f"http://127.0.0.1:{server.port}"],
            env={**os.environ, "SESSIONS": str(SESSIONS)}, capture_output=True, text=True, check=True).stdout
        rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
        failed = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
        commits = rate * SECONDS
        print(f"{name}: {rate:,.0f} commits a second ({failed.group(1) if failed else 0} not 2xx); "
              f"server CPU {(cpu(server.process.pid) - server_before) / commits * 1e6:,.0f} us a commit")
        for port in nodes:
            spent = cpu(pids[port]) - before[port][0]
            carried = announcements(port) - before[port][1]
            print(f"  master :{port}: CPU {spent / commits * 1e6:,.0f} us a commit ({spent / SECONDS * 100:.0f}% of a core), "
                  f"{carried / commits * 100:.0f}% of the announcements, {subscribers(port)} subscribing connection(s) from the server")
        stop.set()
        if url.startswith("redis-cluster://"):
            waited = heard_again(server.port, url)
            print(f"  a followed session's slot moved to another master: its subscriber heard the next commit "
                  + (f"{waited:,.0f} ms after the move ended" if waited is not None else "not within 30 s"))
    finally:
        server.stop()


def main():
    print(f"{SESSIONS:,} sessions of 10 items, each followed by one subscriber; each commit a new order of one session's items")
    folder = tempfile.mkdtemp(prefix="bench-cluster-")
    for name, store in (("one Redis", redis_server), ("Redis Cluster, 3 masters + 3 replicas", redis_cluster)):
        source = store()
        url = next(source)
        try:
            measure(name, url, folder)
        finally:
            source.close()


main()
