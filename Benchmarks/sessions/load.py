"""Session benchmark, against a running server (see run.sh).

memory PORT PID: creates 1,000 sessions of 1,000 movie-like items each (about 100 MB of JSON)
    and prints the server's resident memory per byte of JSON held.
bodies DIR: writes two 10,000-item update bodies that differ in 1% of their items.
changes PORT STORE: on one 100,000-item session, a one-item change (keyed operation) against a
    full update changing the same item, the same change as a patch and in 100 sections (keyed,
    and as a patch), a section moved, changes where ids repeat, a 100-item append (keyed
    inserts, and /append), and one change of 100,000 operations (keyed, a patch, keyed in
    sections).
"""
import time
import http.client
import json
import random
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


def timed(connection, method, path, body, content_type="application/json"):
    start = time.perf_counter()
    connection.request(method, path, body, {"Content-Type": content_type})
    answer = connection.getresponse()
    answer.read()
    assert answer.status in (200, 201), (answer.status, path)
    return (time.perf_counter() - start) * 1000


def written_bytes(connection):
    """The bytes of collection text a shared store has written so far (0 for the memory store)."""
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith("livedelta_session_store_written_bytes_total"))


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def changes(port, store):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    count = 100_000
    items = [movie(i) for i in range(count)]
    timed(connection, "PUT", "/sessions/big", json.dumps({"items": items}, separators=(",", ":")).encode())
    one = []
    written = written_bytes(connection)
    for n in range(400):
        change = {"operations": [{"op": "update", "id": (n * 7919) % count, "changes": {"set": {"rating": n % 10}, "removed": []}}]}
        one.append(timed(connection, "POST", "/sessions/big/changes", json.dumps(change).encode()))
    written = (written_bytes(connection) - written) / len(one)
    full = []
    for n in range(15):
        items[n] = dict(items[n], rating=(n + 1) % 10)
        full.append(timed(connection, "POST", "/sessions/big/update", json.dumps({"items": items}, separators=(",", ":")).encode()))
    print(f"changes {store}: one-item change to a 100,000-item session: p50 {percentile(one, 0.5):.2f} ms, "
          f"p99 {percentile(one, 0.99):.2f} ms ({len(one)} requests; target p50 <= {1 if store == 'memory' else 5} ms); "
          f"the same change as a full update: p50 {percentile(full, 0.5):.1f} ms ({len(full)} requests)")
    if store != "memory":
        print(f"changes {store}: collection text written to the store per one-item change: {written / 1024:.1f} KiB on average "
              f"(the whole session is {len(json.dumps(items, separators=(',', ':'))) / 1024:.0f} KiB)")
    patched = []
    for n in range(60):
        patch = [{"op": "replace", "path": f"/{(n * 7919) % count}/rating", "value": n % 10}]
        patched.append(timed(connection, "POST", "/sessions/big/changes", json.dumps(patch).encode(), "application/json-patch+json"))
    print(f"changes {store}: the same one-field change as an RFC 6902 patch: p50 {percentile(patched, 0.5):.2f} ms ({len(patched)} requests)")
    sections = [{"id": s, "items": [movie(s * 1000 + n) for n in range(1000)]} for s in range(count // 1000)]
    timed(connection, "PUT", "/sessions/shelves", json.dumps({"sections": sections}, separators=(",", ":")).encode())
    shelved = []
    for n in range(60):
        ident = (n * 7919) % count
        change = {"operations": [{"op": "update", "id": ident, "changes": {"set": {"rating": n % 10}, "removed": []}}]}
        shelved.append(timed(connection, "POST", "/sessions/shelves/changes", json.dumps(change).encode()))
    print(f"changes {store}: the same change to 100 sections of 1,000 items: p50 {percentile(shelved, 0.5):.2f} ms ({len(shelved)} requests)")
    shelf_patched = []
    for n in range(60):
        ident = (n * 7919) % count
        patch = [{"op": "replace", "path": f"/sections/{ident // 1000}/items/{ident % 1000}/rating", "value": n % 10}]
        shelf_patched.append(timed(connection, "POST", "/sessions/shelves/changes", json.dumps(patch).encode(), "application/json-patch+json"))
    print(f"changes {store}: the same change to 100 sections as an RFC 6902 patch: p50 {percentile(shelf_patched, 0.5):.2f} ms "
          f"({len(shelf_patched)} requests)")
    moved = []
    for n in range(60):
        moved.append(timed(connection, "POST", "/sessions/shelves/changes",
                           json.dumps({"operations": [{"op": "moveSection", "id": (n * 37) % 100, "before": None}]}).encode()))
    print(f"changes {store}: one of the 100 sections moved to the end: p50 {percentile(moved, 0.5):.2f} ms ({len(moved)} requests)")
    repeated = [dict(movie(i), id=i % (count // 2)) for i in range(count)]
    timed(connection, "PUT", "/sessions/repeated", json.dumps({"items": repeated, "options": {"unique": False}}, separators=(",", ":")).encode())
    updates, inserts = [], []
    for n in range(60):
        key = {"id": (n * 7919) % (count // 2), "occurrence": 2}
        change = {"operations": [{"op": "update", "id": key, "changes": {"set": {"rating": n % 10}, "removed": []}}]}
        updates.append(timed(connection, "POST", "/sessions/repeated/changes", json.dumps(change).encode()))
        change = {"operations": [{"op": "insert", "id": dict(key, occurrence=3), "before": None, "item": movie(key["id"])}]}
        inserts.append(timed(connection, "POST", "/sessions/repeated/changes", json.dumps(change).encode()))
    print(f"changes {store}: 100,000 items, each id twice: one-item change p50 {percentile(updates, 0.5):.2f} ms, "
          f"an id's third item inserted p50 {percentile(inserts, 0.5):.2f} ms ({len(updates)} requests each)")
    keyed, appended = [], []
    for n in range(20):
        base = count + 200 * n
        inserts = [{"op": "insert", "id": base + k, "item": movie(base + k)} for k in range(100)]
        keyed.append(timed(connection, "POST", "/sessions/big/changes", json.dumps({"operations": inserts}).encode()))
        rows = [movie(base + 100 + k) for k in range(100)]
        appended.append(timed(connection, "POST", "/sessions/big/append", json.dumps({"items": rows}).encode()))
    print(f"changes {store}: 100-item append onto 100,000 items: keyed inserts p50 {percentile(keyed, 0.5):.2f} ms, "
          f"/append p50 {percentile(appended, 0.5):.2f} ms ({len(keyed)} requests each)")
    many_operations(connection, store, count)


def many_operations(connection, store, count):
    """One change of as many operations as a change may hold, on a fresh 100,000-item session and
    on 100 sections of 1,000: each operation should cost the same whatever the list's length."""
    random.seed(7)
    keyed, patched, shelved = [], [], []
    for _ in range(3):
        timed(connection, "PUT", "/sessions/many", json.dumps({"items": [movie(i) for i in range(count)]}, separators=(",", ":")).encode())
        ids, operations = list(range(count)), []
        for n in range(count):
            if n % 3 == 0:
                operations.append({"op": "insert", "id": 10 * count + n, "before": random.choice(ids), "item": movie(10 * count + n)})
                ids.append(10 * count + n)
            elif n % 3 == 1:
                moved, before = random.sample(ids, 2)
                operations.append({"op": "move", "id": moved, "before": before})
            else:
                operations.append({"op": "update", "id": random.choice(ids), "changes": {"set": {"rating": n % 10}, "removed": []}})
        keyed.append(timed(connection, "POST", "/sessions/many/changes", json.dumps({"operations": operations}).encode()))
        size, patch = len(ids), []
        for n in range(count):
            if n % 2 == 0:
                patch.append({"op": "add", "path": f"/{random.randint(0, size)}", "value": movie(20 * count + n)})
                size += 1
            else:
                patch.append({"op": "remove", "path": f"/{random.randrange(size)}"})
                size -= 1
        patched.append(timed(connection, "POST", "/sessions/many/changes", json.dumps(patch).encode(), "application/json-patch+json"))
        sections = [{"id": s, "items": [movie(s * 1000 + n) for n in range(1000)]} for s in range(count // 1000)]
        timed(connection, "PUT", "/sessions/many", json.dumps({"sections": sections}, separators=(",", ":")).encode())
        where = {s * 1000 + n: s for s in range(count // 1000) for n in range(1000)}
        operations = []
        for n in range(count):
            moved, before = random.sample(range(count), 2)
            if n % 2 == 0 and moved != before:
                operations.append({"op": "move", "id": moved, "section": where[before], "before": before})
                where[moved] = where[before]
            else:
                operations.append({"op": "update", "id": moved, "changes": {"set": {"rating": n % 10}, "removed": []}})
        shelved.append(timed(connection, "POST", "/sessions/many/changes", json.dumps({"operations": operations}).encode()))
    print(f"changes {store}: one change of 100,000 operations on 100,000 items: keyed inserts, moves and updates "
          f"{percentile(keyed, 0.5):.0f} ms, an RFC 6902 patch of adds and removes {percentile(patched, 0.5):.0f} ms, "
          f"keyed moves and updates in 100 sections {percentile(shelved, 0.5):.0f} ms (medians of {len(keyed)})")


if __name__ == "__main__":
    if sys.argv[1] == "changes":
        changes(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "memory":
        memory(int(sys.argv[2]), int(sys.argv[3]))
    else:
        bodies(sys.argv[2])
