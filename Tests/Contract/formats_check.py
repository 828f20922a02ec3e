"""Every delta format replays exactly, checked by appliers that are not LiveDelta's code.

Run by run.sh against a server at the URL given. Random flat collections (hypothesis): unique
objects with contents that change, and repeated scalar ids (`unique: false`). For each pair:
- `jsonPatch`: the `jsonpatch` package applies the patch to the old document and must give
  the new one exactly;
- `sequential`: a replayer written from Android's `ListUpdateCallback` documentation (each
  operation on the list as the ones before left it; a move takes the row out and puts it back
  at `to`; inserted and changed rows read the new data) must give the new list, the changed
  rows must be exactly the batch delta's reload targets, and there must be as many moves as
  the batch delta has;
- `keyed`: a replayer by key (remove, move before, insert before, update) must give the new
  list, keys and items.
The same runs through a session's update.
"""
import json
import sys
import urllib.request

import jsonpatch
from hypothesis import HealthCheck, given, settings, strategies as st

URL = sys.argv[1]


def post(path, body, method="POST"):
    request = urllib.request.Request(URL + path, data=json.dumps(body).encode(), method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        return json.loads(answer.read() or b"null")


def android_apply(old, operations, new):
    rows, changed = list(old), []
    for op in operations:
        if op["op"] == "remove":
            assert 0 <= op["position"] and op["position"] + op["count"] <= len(rows), op
            del rows[op["position"]:op["position"] + op["count"]]
        elif op["op"] == "move":
            row = rows.pop(op["from"])
            assert 0 <= op["to"] <= len(rows), op
            rows.insert(op["to"], row)
        elif op["op"] == "insert":
            p, n = op["position"], op["count"]
            assert 0 <= p <= len(rows), op
            rows[p:p] = new[p:p + n]
        elif op["op"] == "change":
            for row in range(op["position"], op["position"] + op["count"]):
                rows[row] = new[row]
                changed.append(row)
        else:
            raise AssertionError(op)
    return rows, changed


def keyed_apply(old, operations):
    rows = list(old)  # (key, item)

    def index(key):
        keys = [k for k, _ in rows]
        assert key in keys, (key, keys)
        return keys.index(key)

    def place(element, before):
        rows.insert(index(before), element) if before is not None else rows.append(element)

    for op in operations:
        key = json.dumps(op["id"], sort_keys=True)
        before = None if op.get("before") is None else json.dumps(op["before"], sort_keys=True)
        if op["op"] == "remove":
            rows.pop(index(key))
        elif op["op"] == "move":
            place(rows.pop(index(key)), before)
        elif op["op"] == "insert":
            assert key not in [k for k, _ in rows]
            place((key, op["item"]), before)
        elif op["op"] == "update":
            rows[index(key)] = (key, op["item"])
        else:
            raise AssertionError(op)
    return rows


def keyed(items, unique):
    """Each item with its key as the keyed format names it: its id, or {id, occurrence}."""
    seen, keys = {}, []
    for item in items:
        ident = item["id"] if isinstance(item, dict) else item
        if unique:
            keys.append(json.dumps(ident, sort_keys=True))
        else:
            seen[json.dumps(ident)] = seen.get(json.dumps(ident), 0) + 1
            keys.append(json.dumps({"id": ident, "occurrence": seen[json.dumps(ident)]}, sort_keys=True))
    return list(zip(keys, items))


def check(old, new, answers, unique):
    batch = answers["batch"]["delta"]
    patched = jsonpatch.apply_patch(old, answers["jsonPatch"]["jsonPatch"])
    assert patched == new, (old, new, answers["jsonPatch"]["jsonPatch"], patched)
    rows, changed = android_apply(old, answers["sequential"]["sequential"], new)
    assert rows == new, (old, new, answers["sequential"]["sequential"], rows)
    assert changed == sorted(r["target"] for r in batch["reloads"]), (changed, batch["reloads"])
    moves = [op for op in answers["sequential"]["sequential"] if op["op"] == "move"]
    assert len(moves) == len(batch["moves"])
    assert len([op for op in answers["jsonPatch"]["jsonPatch"] if op["op"] == "move"]) == len(batch["moves"])
    assert keyed_apply(keyed(old, unique), answers["keyed"]["keyed"]) == keyed(new, unique)


FORMATS = ["batch", "sequential", "jsonPatch", "keyed"]
objects = st.lists(st.builds(lambda i, v: {"id": i, "v": v}, st.integers(0, 30), st.integers(0, 2)),
                   max_size=30, unique_by=lambda item: item["id"])
scalars = st.lists(st.sampled_from(["A", "B", "C", "D", 1, 2]), max_size=20)
checks = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@checks
@given(objects, objects)
def diffs_of_objects_replay(old, new):
    answers = {f: post("/diff", {"old": old, "new": new, "options": {"format": f}}) for f in FORMATS}
    check(old, new, answers, unique=True)


@checks
@given(scalars, scalars)
def diffs_of_repeated_ids_replay(old, new):
    answers = {f: post("/diff", {"old": old, "new": new, "options": {"format": f, "unique": False}}) for f in FORMATS}
    check(old, new, answers, unique=False)


@settings(max_examples=60, deadline=None)
@given(objects, objects)
def session_updates_replay(old, new):
    answers = {}
    for f in FORMATS:
        post("/sessions/formats", {"items": old}, method="PUT")
        answers[f] = post("/sessions/formats/delta", {"items": new, "options": {"format": f}})
    post("/sessions/formats", {"items": old}, method="PUT")
    committed = post("/sessions/formats/update", {"items": new, "options": {"format": "jsonPatch"}})
    assert committed["version"] == 1 and jsonpatch.apply_patch(old, committed["jsonPatch"]) == new
    check(old, new, answers, unique=True)


diffs_of_objects_replay()
diffs_of_repeated_ids_replay()
session_updates_replay()
print("formats: jsonPatch (jsonpatch package), sequential (Android replayer) and keyed answers replay exactly")
