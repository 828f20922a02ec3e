"""Memory benchmark: peak resident memory of the release server under hostile-sized bodies.

Starts `.build/release/livedelta` on a free loopback port, and for each scenario reports the
server's peak RSS (VmHWM, reset between scenarios by a fresh server), the bytes in flight, and
their ratio; prints figures, asserts nothing. Bounded: each scenario ends in seconds.
"""
import concurrent.futures, http.client, os, re, subprocess, sys, time

BINARY = os.path.join(os.path.dirname(__file__), "../../.build/release/livedelta")


def start(*flags):
    server = subprocess.Popen([BINARY, "--host", "127.0.0.1", "--port", "0", "--log-level", "notice", *flags],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in server.stdout:
        match = re.search(r"port=(\d+)", line)
        if match:
            return server, int(match.group(1))
    raise RuntimeError("the server did not start")


def peak_rss(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def post(port, body):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        connection.request("POST", "/diff", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        return response.status
    except OSError as error:
        return f"error {error}"
    finally:
        connection.close()


def scenario(name, bodies, flags=()):
    server, port = start(*flags)
    try:
        baseline = peak_rss(server.pid)
        began = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(len(bodies)) as pool:
            statuses = list(pool.map(lambda body: post(port, body), bodies))
        elapsed = time.monotonic() - began
        peak = peak_rss(server.pid)
        in_flight = sum(len(body) for body in bodies)
        print(f"== {name}")
        print(f"   statuses {sorted(set(map(str, statuses)))}, {elapsed:.1f} s")
        print(f"   bytes in flight {in_flight / 1e6:.1f} MB; peak RSS {peak / 1e6:.1f} MB (idle {baseline / 1e6:.1f} MB); "
              f"peak / bytes in flight {peak / in_flight:.2f}")
    finally:
        server.terminate()
        server.wait(timeout=30)


def tiny_items(count):
    return b'{"old":[' + b"1," * (count - 1) + b'1],"new":[]}'


def main():
    scenario("16M tiny items in one body (30.5 MiB)", [b'{"old":[' + b"0," * 15_999_999 + b'0],"new":[]}'])
    twenty_mb = tiny_items(10_000_000)[:20_000_000]
    twenty_mb = twenty_mb[: twenty_mb.rfind(b",")] + b'],"new":[]}'
    scenario("16 parallel 20 MB bodies of tiny items", [twenty_mb] * 16, flags=("--max-buffered-body-bytes", str(1 << 30)))
    distinct = b'{"old":[' + b",".join(str(i).encode() for i in range(1_900_000)) + b'],"new":[]}'
    scenario("16 parallel bodies of 1.9M distinct small ids each (under the per-request cap; the 8M in-flight budget decides)",
             [distinct] * 16)
    uuids = [f'"{i:08x}-0000-4000-8000-{i * 7919 % 10**12:012d}"'.encode() for i in range(1_000_000)]
    old = b"[" + b",".join(uuids) + b"]"
    new = b"[" + b",".join(uuids[::-1][:900_000] + uuids[:100_000]) + b"]"
    body = b'{"old":' + old + b',"new":' + new + b"}"
    scenario("one 1M-item diff each side (UUID strings)", [body], flags=("--max-body-size", str(128 << 20)))
    scenario("8 parallel 1M-item diffs, 8M items allowed in flight", [body] * 8,
             flags=("--max-body-size", str(128 << 20), "--max-buffered-body-bytes", str(1 << 30)))


if __name__ == "__main__":
    sys.exit(main())
