"""Slowloris benchmark: 1,050 connections from one address (127.0.0.2) that each send one
header byte every 5 s, reconnecting when cut off, for 60 s; meanwhile a normal client on
127.0.0.1 polls /health and posts small diffs. Prints the normal client's success rate and
latency percentiles, then checks that the server serves normally and stops on SIGTERM.
Prints figures and asserts nothing; loopback only, bounded in time.
"""
import http.client, os, re, selectors, signal, socket, subprocess, sys, threading, time

BINARY = os.path.join(os.path.dirname(__file__), "../../.build/release/livedelta")
ATTACKERS, SECONDS, TRICKLE = 1050, float(os.environ.get("SLOWLORIS_SECONDS", "60")), 5.0
BODY = b'{"old":[{"id":1,"v":1},{"id":2},{"id":3}],"new":[{"id":3},{"id":1,"v":2},{"id":4}]}'


def start():
    server = subprocess.Popen([BINARY, "--host", "127.0.0.1", "--port", "0", "--log-level", "notice"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in server.stdout:
        match = re.search(r"port=(\d+)", line)
        if match:
            threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
            return server, int(match.group(1))
    raise RuntimeError("the server did not start")


def attack(port, stop, counts):
    """Holds as many slow connections as it can, one header byte every TRICKLE seconds each."""
    head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100_000
    conns = {}  # socket -> bytes sent

    def connect():
        try:
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.settimeout(1)
            s.connect(("127.0.0.1", port))
            s.setblocking(False)
            conns[s] = 0
            counts["opened"] += 1
        except OSError:
            counts["connect_failed"] += 1

    next_round = time.monotonic()
    while not stop.is_set():
        while len(conns) < ATTACKERS and not stop.is_set():
            connect()
        if time.monotonic() >= next_round:
            for s in list(conns):
                try:
                    s.send(head[conns[s]:conns[s] + 1])
                    conns[s] += 1
                    # A refusal or a 408 ends the connection: read it and reconnect later.
                    if s.recv(4096, socket.MSG_PEEK):
                        raise OSError("answered")
                except BlockingIOError:
                    pass
                except OSError:
                    counts["cut"] += 1
                    s.close()
                    del conns[s]
            next_round = time.monotonic() + TRICKLE
        stop.wait(0.2)
    for s in conns:
        s.close()


def normal(port, stop, results):
    connection = None
    k = 0
    while not stop.is_set():
        k += 1
        began = time.monotonic()
        try:
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            if k % 2:
                connection.request("GET", "/health")
            else:
                connection.request("POST", "/diff", body=BODY, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            ok = response.status == 200
        except (OSError, http.client.HTTPException):
            ok = False
            connection = None
        results.append((ok, time.monotonic() - began))
        time.sleep(0.02)


def main():
    server, port = start()
    stop = threading.Event()
    counts = {"opened": 0, "connect_failed": 0, "cut": 0}
    results = []
    attacker = threading.Thread(target=attack, args=(port, stop, counts))
    attacker.start()
    time.sleep(2)  # let the attack fill what it can
    client = threading.Thread(target=normal, args=(port, stop, results))
    client.start()
    time.sleep(SECONDS)
    stop.set()
    client.join()
    attacker.join()
    ok = [latency for good, latency in results if good]
    latencies = sorted(latency for _, latency in results)
    def pct(p):
        return latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] * 1000 if latencies else float("nan")
    print(f"== slowloris: {ATTACKERS} connections from 127.0.0.2, one byte every {TRICKLE:.0f} s, {SECONDS:.0f} s")
    print(f"   attacker: {counts['opened']} connections opened, {counts['cut']} cut off or refused, {counts['connect_failed']} failed to connect")
    print(f"   normal client: {len(ok)}/{len(results)} succeeded ({100 * len(ok) / max(1, len(results)):.2f}%), "
          f"p50 {pct(50):.2f} ms, p99 {pct(99):.2f} ms, max {latencies[-1] * 1000 if latencies else 0:.1f} ms")
    after = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    after.request("GET", "/health")
    print(f"   afterwards: /health {after.getresponse().status}")
    server.send_signal(signal.SIGTERM)
    try:
        print(f"   SIGTERM: exit {server.wait(timeout=30)}")
    except subprocess.TimeoutExpired:
        print("   SIGTERM: still running after 30 s")
        server.kill()


if __name__ == "__main__":
    sys.exit(main())
