"""Session benchmark, against a running server (see run.sh).

memory PORT PID: creates 1,000 sessions of 1,000 movie-like items each (about 100 MB of JSON)
    and prints the server's resident memory per byte of JSON held.
bodies DIR: writes two 10,000-item update bodies that differ in 1% of their items.
"""
import http.client
import json
import sys


def movie(i, edition=0):
    return {"id": i, "title": f"Movie number {i}" + (" (restored)" if edition else ""), "year": 1950 + i % 70,
            "rating": (i % 100) / 10, "tags": ["comedy", "classic"] if i % 3 == 0 else ["drama", "new"]}


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def memory(port, pid):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    before = rss_kib(pid)
    held = 0
    for session in range(1000):
        items = [movie(session * 1000 + i) for i in range(1000)]
        body = json.dumps({"items": items}, separators=(",", ":")).encode()
        held += len(json.dumps(items, separators=(",", ":")))
        connection.request("PUT", f"/sessions/s{session}", body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 201, answer.status
    after = rss_kib(pid)
    grown = (after - before) * 1024
    print(f"sessions memory: 1,000 sessions x 1,000 items, {held / 1e6:.1f} MB of JSON held; "
          f"resident memory grew {grown / 1e6:.1f} MB (now {after / 1024:.0f} MiB): "
          f"{grown / held:.2f} bytes per byte of JSON (target <= 1.5)")


def bodies(directory):
    count = 10_000
    first = [movie(i) for i in range(count)]
    second = [movie(i, edition=1) if i % 100 == 0 else movie(i) for i in range(count)]
    for name, items in (("a", first), ("b", second)):
        with open(f"{directory}/{name}.json", "w") as out:
            json.dump({"items": items}, out, separators=(",", ":"))


if __name__ == "__main__":
    if sys.argv[1] == "memory":
        memory(int(sys.argv[2]), int(sys.argv[3]))
    else:
        bodies(sys.argv[2])
