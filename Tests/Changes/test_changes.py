"""Writes by change, against the real binary, on the memory store and on Redis (a redis-server
the tests start; two replicas where it matters): random sessions and random valid change lists,
checked against appliers written here (keyed) and Python's jsonpatch (RFC 6902); every refusal
the issue lists, with the session unchanged; and 8 writers racing on one session."""
import copy
import json
import os
import sys
import threading

import jsonpatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PythonSupport"))
from livedelta_testing import ServerProcess, batch_replay, redis_server, store_servers  # noqa: E402

BINARY = os.environ.get("LIVEDELTA_BINARY", ".build/debug/livedelta")
EXAMPLES = int(os.environ.get("CHANGES_EXAMPLES", "60"))
checks = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


class Server(ServerProcess):
    def __init__(self, flags, log_path):
        super().__init__(BINARY, flags, log_path)


@pytest.fixture(scope="module")
def redis_url():
    yield from redis_server()


@pytest.fixture(scope="module", params=["memory", "redis"])
def servers(request, tmp_path_factory):
    """One server on the memory store, or two replicas sharing a Redis."""
    yield from store_servers(request, tmp_path_factory, BINARY)


counter = iter(range(1_000_000))


def new_session(server, body):
    name = f"s{next(counter)}"
    status, answer = server.request("PUT", f"/sessions/{name}", body)
    assert status in (200, 201), answer
    return name


def items_of(server, name):
    status, answer = server.request("GET", f"/sessions/{name}")
    assert status == 200, answer
    return answer.get("items", answer.get("sections")), answer["version"]




def key_of(item):
    return item["id"] if isinstance(item, dict) else item


# MARK: - Keyed operations, and the applier they are checked against


def keyed_apply(rows, operations):
    """rows: [(key, item)], keys as JSON text; the keyed vocabulary applied in order."""
    rows = list(rows)

    def index(key):
        return [k for k, _ in rows].index(key)

    for op in operations:
        key = json.dumps(op["id"], sort_keys=True)
        before = None if op.get("before") is None else json.dumps(op["before"], sort_keys=True)
        if op["op"] == "remove":
            rows.pop(index(key))
        elif op["op"] in ("move", "insert"):
            element = rows.pop(index(key)) if op["op"] == "move" else (key, op["item"])
            rows.insert(index(before), element) if before is not None else rows.append(element)
        elif op["op"] == "update":
            current = rows[index(key)][1]
            if "item" in op:
                value = op["item"]
            else:
                value = {k: v for k, v in current.items() if k not in op["changes"]["removed"]}
                value.update(op["changes"]["set"])
            rows[index(key)] = (key, value)
    return rows


def labelled(items, unique):
    seen, rows = {}, []
    for item in items:
        ident = key_of(item)
        if unique:
            rows.append((json.dumps(ident, sort_keys=True), item))
        else:
            seen[json.dumps(ident)] = seen.get(json.dumps(ident), 0) + 1
            rows.append((json.dumps({"id": ident, "occurrence": seen[json.dumps(ident)]}, sort_keys=True), item))
    return rows


@st.composite
def keyed_case(draw, unique=True):
    """A session's items and a valid list of keyed operations on them."""
    if unique:
        ids = draw(st.lists(st.integers(0, 40), max_size=25, unique=True))
        items = [{"id": i, "v": draw(st.integers(0, 2))} for i in ids]
    else:
        items = draw(st.lists(st.sampled_from(["A", "B", "C", 1, 2]), max_size=20))
    rows = labelled(items, unique)
    operations = []
    fresh = iter(range(100, 1000))
    for _ in range(draw(st.integers(1, 8))):
        keys = [json.loads(k) for k, _ in rows]
        choices = ["insert"] + (["move", "remove", "update"] if rows else [])
        kind = draw(st.sampled_from(choices))
        if kind == "insert":
            if unique:
                ident = next(fresh)
                item, key = {"id": ident, "v": 0}, ident
            else:
                value = draw(st.sampled_from(["A", "B", "Z", 1]))
                taken = [k["occurrence"] for k in keys if k["id"] == value]
                key = {"id": value, "occurrence": max(taken, default=0) + 1 + draw(st.integers(0, 1))}
                item = value
            before = draw(st.sampled_from([None] + keys))
            operation = {"op": "insert", "id": key, "before": before, "item": item}
        elif kind == "move":
            key = draw(st.sampled_from(keys))
            before = draw(st.sampled_from([None] + [k for k in keys if k != key]))
            operation = {"op": "move", "id": key, "before": before}
        elif kind == "remove":
            operation = {"op": "remove", "id": draw(st.sampled_from(keys))}
        else:
            key = draw(st.sampled_from(keys))
            if unique and draw(st.booleans()):
                operation = {"op": "update", "id": key, "changes": {"set": {"v": draw(st.integers(0, 3)), "w": 1}, "removed": ["w"] if draw(st.booleans()) else []}}
                operation["changes"]["set"].pop("w") if "w" in operation["changes"]["removed"] else None
            else:
                operation = {"op": "update", "id": key, "item": {"id": key, "v": draw(st.integers(0, 3))} if unique else key["id"]}
        operations.append(operation)
        rows = keyed_apply(rows, [operation])
    return items, operations


def check_step(server, name, old, new, answer, dry_run):
    """The answer's delta replays old → new, and equals the dry run's (update with `new`) but
    for moves, of which it has no more."""
    assert answer["baseVersion"] + 1 == answer["version"]
    if "delta" in answer:
        assert batch_replay(old, answer["delta"], new) == new, (old, answer, new)
        expected = dry_run["delta"]
        for field in ("deletions", "insertions", "reloads"):
            assert answer["delta"][field] == expected[field], (field, answer, dry_run)
        assert len(answer["delta"]["moves"]) <= len(expected["moves"])
        assert len(answer["delta"]["moves"]) == len(expected["moves"])


def assert_settled(server, name, body):
    """The session holds `body` as it is, identities included: where ids repeat, wrong
    occurrence numbers would show as changes in a dry run against it."""
    status, again = server.request("POST", f"/sessions/{name}/delta", body)
    assert status == 200, again
    for stage in ("delta", "sectionDelta", "itemDelta"):
        for field in ("deletions", "insertions", "moves", "reloads"):
            assert again.get(stage, {}).get(field, []) == [], (stage, field, again)


def change_and_compare(servers, member, start, expected, operations, unique):
    """A session of `start` (its `member`) changed by `operations` on one replica holds
    `expected` on the other, at version 1; answers where, the answer and a dry run's."""
    writer, reader = servers[0], servers[-1]
    name = new_session(writer, {member: start, "options": {"unique": unique}})
    status, dry_run = reader.request("POST", f"/sessions/{name}/delta", {member: expected})
    assert status == 200, dry_run
    status, answer = writer.request("POST", f"/sessions/{name}/changes", {"operations": operations})
    assert status == 200, (start, operations, answer)
    held, version = items_of(reader, name)
    assert held == expected, (start, operations, held)
    assert version == 1
    return reader, name, answer, dry_run


def run_keyed(servers, items, operations, unique):
    expected = [item for _, item in keyed_apply(labelled(items, unique), operations)]
    reader, name, answer, dry_run = change_and_compare(servers, "items", items, expected, operations, unique)
    check_step(reader, name, items, expected, answer, dry_run)
    assert_settled(reader, name, {"items": expected})


def test_keyed_operations_on_unique_lists(servers):
    @checks
    @given(keyed_case(unique=True))
    def check(case):
        run_keyed(servers, *case, unique=True)
    check()


def test_keyed_operations_where_ids_repeat(servers):
    @checks
    @given(keyed_case(unique=False))
    def check(case):
        run_keyed(servers, *case, unique=False)
    check()


# MARK: - Sectioned sessions


def section_operation(draw, model, kind):
    """A moveSection or removeSection of one of the model's sections, done to the model."""
    section = draw(st.sampled_from(model))
    model.remove(section)
    if kind == "removeSection":
        return {"op": "removeSection", "id": section["id"]}
    before = draw(st.sampled_from([None] + [s["id"] for s in model]))
    model.insert(len(model) if before is None else [s["id"] for s in model].index(before), section)
    return {"op": "moveSection", "id": section["id"], "before": before}


@st.composite
def sectioned_case(draw):
    ids = draw(st.lists(st.integers(0, 30), max_size=16, unique=True))
    count = draw(st.integers(1, 4))
    sections = [{"id": f"s{n}", "title": "t", "items": []} for n in range(count)]
    for ident in ids:
        draw(st.sampled_from(sections))["items"].append({"id": ident, "v": 0})
    model = copy.deepcopy(sections)
    operations = []
    fresh = iter(range(100, 1000))
    for _ in range(draw(st.integers(1, 6))):
        item_keys = [i["id"] for s in model for i in s["items"]]
        section_keys = [s["id"] for s in model]
        choices = ["insertSection"] + (["insert", "updateSection", "moveSection"] if model else []) + (["move", "remove", "update"] if item_keys else [])
        if len(model) > 1:
            choices.append("removeSection")
        kind = draw(st.sampled_from(choices))
        if kind == "insert":
            section = draw(st.sampled_from(model))
            ident = next(fresh)
            before = draw(st.sampled_from([None] + [i["id"] for i in section["items"]]))
            operation = {"op": "insert", "id": ident, "section": section["id"], "before": before, "item": {"id": ident, "v": 1}}
            place = len(section["items"]) if before is None else [i["id"] for i in section["items"]].index(before)
            section["items"].insert(place, {"id": ident, "v": 1})
        elif kind == "move":
            ident = draw(st.sampled_from(item_keys))
            source = next(s for s in model if any(i["id"] == ident for i in s["items"]))
            element = next(i for i in source["items"] if i["id"] == ident)
            source["items"].remove(element)
            target = draw(st.sampled_from(model))
            before = draw(st.sampled_from([None] + [i["id"] for i in target["items"]]))
            operation = {"op": "move", "id": ident, "section": target["id"], "before": before}
            place = len(target["items"]) if before is None else [i["id"] for i in target["items"]].index(before)
            target["items"].insert(place, element)
        elif kind == "remove":
            ident = draw(st.sampled_from(item_keys))
            operation = {"op": "remove", "id": ident}
            for s in model:
                s["items"] = [i for i in s["items"] if i["id"] != ident]
        elif kind == "update":
            ident = draw(st.sampled_from(item_keys))
            operation = {"op": "update", "id": ident, "changes": {"set": {"v": 9}, "removed": []}}
            for s in model:
                for i in s["items"]:
                    if i["id"] == ident:
                        i["v"] = 9
        elif kind == "insertSection":
            name = f"n{next(fresh)}"
            ident = next(fresh)
            before = draw(st.sampled_from([None] + section_keys))
            section = {"id": name, "title": "new", "items": [{"id": ident, "v": 2}]}
            operation = {"op": "insertSection", "id": name, "before": before, "section": section}
            model.insert(len(model) if before is None else section_keys.index(before), copy.deepcopy(section))
        elif kind == "updateSection":
            section = draw(st.sampled_from(model))
            operation = {"op": "updateSection", "id": section["id"], "section": {"id": section["id"], "title": "changed"}}
            section["title"] = "changed"
        else:
            operation = section_operation(draw, model, kind)
        operations.append(operation)
    return sections, operations, model


def run_sectioned(servers, sections, operations, model, unique):
    """Keyed operations on a sectioned session leave the model, settled; the delta agrees with
    a dry run's (its moves by count)."""
    reader, name, answer, dry_run = change_and_compare(servers, "sections", sections, model, operations, unique)
    for stage in ("sectionDelta", "itemDelta"):
        if stage in answer and stage in dry_run:
            for field in ("deletions", "insertions", "reloads"):
                assert answer[stage][field] == dry_run[stage][field]
            assert len(answer[stage]["moves"]) == len(dry_run[stage]["moves"])
    assert_settled(reader, name, {"sections": model})


def test_keyed_operations_on_sections(servers):
    @checks
    @given(sectioned_case())
    def check(case):
        run_sectioned(servers, *case, unique=True)
    check()


@st.composite
def sectioned_repeated_case(draw):
    """Sections whose item ids repeat (occurrences count across sections), and keyed
    operations on them; the model keeps each item under the key it had when the change began,
    or the key its insert gave it, as the operations name items."""
    values = ["A", "B", 1]
    count = draw(st.integers(1, 3))
    sections = [{"id": f"s{n}", "items": draw(st.lists(st.sampled_from(values), max_size=5))} for n in range(count)]
    seen, model = {}, []
    for section in sections:
        rows = []
        for value in section["items"]:
            seen[json.dumps(value)] = seen.get(json.dumps(value), 0) + 1
            rows.append(({"id": value, "occurrence": seen[json.dumps(value)]}, value))
        model.append({"id": section["id"], "rows": rows})
    taken = {json.dumps(key, sort_keys=True) for s in model for key, _ in s["rows"]}

    def fresh_key(value):
        occurrence = 1
        while json.dumps({"id": value, "occurrence": occurrence}, sort_keys=True) in taken:
            occurrence += 1
        taken.add(json.dumps({"id": value, "occurrence": occurrence}, sort_keys=True))
        return {"id": value, "occurrence": occurrence}

    def where(key):
        for s in model:
            for index, (k, _) in enumerate(s["rows"]):
                if k == key:
                    return s, index
        raise AssertionError(key)

    operations, names = [], iter(range(100, 1000))
    for _ in range(draw(st.integers(1, 6))):
        keys = [k for s in model for k, _ in s["rows"]]
        choices = ["insert", "insertSection", "moveSection"] + (["move", "remove", "update"] if keys else [])
        if len(model) > 1:
            choices.append("removeSection")
        kind = draw(st.sampled_from(choices))
        if kind in ("insert", "move"):
            if kind == "insert":
                value = draw(st.sampled_from(values))
                key, element = fresh_key(value), None
                operation = {"op": "insert", "id": key, "item": value}
            else:
                key = draw(st.sampled_from(keys))
                source, index = where(key)
                element = source["rows"].pop(index)
                operation = {"op": "move", "id": key}
            target = draw(st.sampled_from(model))
            before = draw(st.sampled_from([None] + [k for k, _ in target["rows"]]))
            operation.update({"section": target["id"], "before": before})
            place = len(target["rows"]) if before is None else [k for k, _ in target["rows"]].index(before)
            target["rows"].insert(place, element or (key, value))
        elif kind == "remove":
            key = draw(st.sampled_from(keys))
            source, index = where(key)
            source["rows"].pop(index)
            operation = {"op": "remove", "id": key}
        elif kind == "update":
            key = draw(st.sampled_from(keys))
            operation = {"op": "update", "id": key, "item": key["id"]}
        elif kind == "insertSection":
            name = f"n{next(names)}"
            items = draw(st.lists(st.sampled_from(values), max_size=3))
            rows = [(fresh_key(value), value) for value in items]
            before = draw(st.sampled_from([None] + [s["id"] for s in model]))
            operation = {"op": "insertSection", "id": name, "before": before, "section": {"id": name, "items": items}, "keys": [k for k, _ in rows]}
            model.insert(len(model) if before is None else [s["id"] for s in model].index(before), {"id": name, "rows": rows})
        else:
            operation = section_operation(draw, model, kind)
        operations.append(operation)
    return sections, operations, [{"id": s["id"], "items": [value for _, value in s["rows"]]} for s in model]


def test_keyed_operations_on_sections_where_ids_repeat(servers):
    @checks
    @given(sectioned_repeated_case())
    def check(case):
        run_sectioned(servers, *case, unique=False)
    check()


# MARK: - RFC 6902


@st.composite
def patch_case(draw, sectioned=False, unique=True):
    # Where ids repeat, few of them, so that most stand more than once.
    ids = draw(st.lists(st.integers(0, 40 if unique else 4), max_size=20, unique=unique))
    items = [{"id": i, "v": draw(st.integers(0, 2))} for i in ids]
    document = {"sections": [{"id": "a", "items": items[: len(items) // 2]}, {"id": "b", "items": items[len(items) // 2:]}]} if sectioned else items
    model = copy.deepcopy(document)
    patch = []
    fresh = iter(range(100, 1000))
    for _ in range(draw(st.integers(1, 6))):
        if sectioned:
            s = draw(st.integers(0, len(model["sections"]) - 1))
            rows, prefix = model["sections"][s]["items"], f"/sections/{s}/items"
        else:
            rows, prefix = model, ""
        kinds = ["add"] + (["remove", "replace", "move", "test", "copy"] if rows else [])
        if sectioned and len(model["sections"]) > 1:
            # Items moved to the other section, a section's own fields, and the sections' order.
            kinds += (["move across"] if rows else []) + ["retitle", "move section"]
        if not sectioned and rows:
            # Whole items: replaced (same id or a new one), copied and the original taken out
            # (the held item stands elsewhere), and the root itself tested.
            kinds += ["replace item", "copy item", "test root"]
        kind = draw(st.sampled_from(kinds))
        if kind in ("move across", "retitle", "move section"):
            other = 1 - s
            if kind == "move across" and rows:
                target = model["sections"][other]["items"]
                operation = {"op": "move", "from": f"{prefix}/{draw(st.integers(0, len(rows) - 1))}",
                             "path": f"/sections/{other}/items/{draw(st.integers(0, len(target)))}"}
            elif kind == "retitle":
                operation = {"op": "add", "path": f"/sections/{s}/title", "value": draw(st.sampled_from(["x", "y"]))}
            else:
                operation = {"op": "move", "from": f"/sections/{s}", "path": f"/sections/{other}"}
            patch.append(operation)
            model = jsonpatch.apply_patch(model, [operation])
            continue
        if kind in ("replace item", "copy item", "test root"):
            index = draw(st.integers(0, len(rows) - 1))
            if kind == "replace item":
                same = draw(st.booleans())
                operations = [{"op": "replace", "path": f"/{index}", "value": {"id": rows[index]["id"] if same else next(fresh), "v": 7}}]
            elif kind == "copy item":
                to = draw(st.integers(0, len(rows)))
                operations = [{"op": "copy", "from": f"/{index}", "path": f"/{to}"}, {"op": "remove", "path": f"/{index if index < to else index + 1}"}]
            else:
                operations = [{"op": "test", "path": "", "value": rows}]
            patch += operations
            model = jsonpatch.apply_patch(model, operations)
            continue
        if kind == "add":
            where = draw(st.sampled_from(["-"] + [str(i) for i in range(len(rows) + 1)]))
            ident = next(fresh) if unique or draw(st.booleans()) else draw(st.integers(0, 4))
            operation = {"op": "add", "path": f"{prefix}/{where}", "value": {"id": ident, "v": 5}}
        elif kind == "remove":
            operation = {"op": "remove", "path": f"{prefix}/{draw(st.integers(0, len(rows) - 1))}"}
        elif kind == "replace":
            operation = {"op": "replace", "path": f"{prefix}/{draw(st.integers(0, len(rows) - 1))}/v", "value": draw(st.integers(0, 9))}
        elif kind == "move":
            operation = {"op": "move", "from": f"{prefix}/{draw(st.integers(0, len(rows) - 1))}", "path": f"{prefix}/{draw(st.integers(0, len(rows) - 1))}"}
        elif kind == "copy":
            operation = {"op": "copy", "from": f"{prefix}/{draw(st.integers(0, len(rows) - 1))}/v", "path": f"{prefix}/{draw(st.integers(0, len(rows) - 1))}/w"}
        else:
            index = draw(st.integers(0, len(rows) - 1))
            operation = {"op": "test", "path": f"{prefix}/{index}/id", "value": rows[index]["id"]}
        patch.append(operation)
        model = jsonpatch.apply_patch(model, [operation])
    return document, patch, model


def run_patch(servers, document, patch, model, sectioned, unique=True):
    writer, reader = servers[0], servers[-1]
    name = new_session(writer, document if sectioned else {"items": document, "options": {"unique": unique}})
    status, dry_run = reader.request("POST", f"/sessions/{name}/delta", model if sectioned else {"items": model})
    assert status == 200, dry_run
    status, answer = writer.request("POST", f"/sessions/{name}/changes", patch, content_type="application/json-patch+json")
    assert status == 200, (document, patch, answer)
    held, version = items_of(reader, name)
    assert held == (model["sections"] if sectioned else model), (document, patch, held)
    assert version == 1
    assert_settled(reader, name, model if sectioned else {"items": model})
    if not sectioned:
        check_step(reader, name, document, model, answer, dry_run)
        return
    for stage in ("sectionDelta", "itemDelta"):
        assert (stage in answer) == (stage in dry_run), (answer, dry_run)
        if stage in answer:
            for field in ("deletions", "insertions", "reloads"):
                assert answer[stage][field] == dry_run[stage][field], (document, patch, answer, dry_run)
            assert len(answer[stage]["moves"]) == len(dry_run[stage]["moves"]), (document, patch, answer, dry_run)


def test_json_patches_on_lists(servers):
    @checks
    @given(patch_case())
    def check(case):
        run_patch(servers, *case, sectioned=False)
    check()


def test_json_patches_where_ids_repeat(servers):
    @checks
    @given(patch_case(unique=False))
    def check(case):
        run_patch(servers, *case, sectioned=False, unique=False)
    check()


def test_json_patches_on_sections(servers):
    @checks
    @given(patch_case(sectioned=True))
    def check(case):
        run_patch(servers, *case, sectioned=True)
    check()


def test_a_patch_answers_in_the_format_asked(servers):
    server = servers[0]
    items = [{"id": 1, "v": 0}, {"id": 2, "v": 0}]
    name = new_session(server, {"items": items})
    patch = [{"op": "replace", "path": "/1/v", "value": 7}]
    status, answer = server.request("POST", f"/sessions/{name}/changes?format=jsonPatch&changes=fields", patch,
                                    content_type="application/json-patch+json")
    assert status == 200, answer
    assert jsonpatch.apply_patch(items, answer["jsonPatch"]) == [{"id": 1, "v": 0}, {"id": 2, "v": 7}]
    status, answer = server.request("POST", f"/sessions/{name}/changes", {"operations": [{"op": "remove", "id": 1}], "options": {"format": "keyed"}})
    assert status == 200 and answer["keyed"] == [{"op": "remove", "id": 1}], answer


# MARK: - Refusals: the right status, the operation's pointer, nothing applied


REFUSALS = [
    ("unknown id", {"operations": [{"op": "update", "id": 1, "item": {"id": 1, "v": 1}}, {"op": "remove", "id": 77}]}, None, 409, "change_conflict", "/operations/1/id"),
    ("repeated id", {"operations": [{"op": "insert", "id": 2, "before": None, "item": {"id": 2}}]}, None, 422, "duplicate_id", "/operations/0/id"),
    ("before not there", {"operations": [{"op": "move", "id": 1, "before": 99}]}, None, 409, "change_conflict", "/operations/0/before"),
    ("before itself", {"operations": [{"op": "move", "id": 1, "before": 1}]}, None, 422, "invalid_operation", "/operations/0/before"),
    ("item without id", {"operations": [{"op": "remove", "id": 3}, {"op": "insert", "id": 5, "item": {"v": 1}}]}, None, 422, "missing_id", "/operations/1/item"),
    ("unknown op", {"operations": [{"op": "frobnicate", "id": 1}]}, None, 422, "invalid_operation", "/operations/0/op"),
    ("id changed by update", {"operations": [{"op": "update", "id": 1, "item": {"id": 4}}]}, None, 422, "invalid_operation", "/operations/0/item"),
    ("failing test", [{"op": "replace", "path": "/0/v", "value": 9}, {"op": "test", "path": "/1/id", "value": 5}], "patch", 409, "test_failed", "/1"),
    ("path nowhere", [{"op": "remove", "path": "/0"}, {"op": "replace", "path": "/7/v", "value": 1}], "patch", 409, "change_conflict", "/1"),
    ("patched item without id", [{"op": "add", "path": "/-", "value": {"v": 1}}], "patch", 422, "missing_id", "/0"),
    ("patched repeated id", [{"op": "add", "path": "/0", "value": {"id": 3}}], "patch", 422, "duplicate_id", "/0"),
    # The operation that made the item invalid, not an earlier one that wrote at the same place.
    ("id removed by the last operation", [{"op": "replace", "path": "/0/v", "value": 1}, {"op": "replace", "path": "/1/v", "value": 1},
                                          {"op": "add", "path": "/-", "value": {"id": 4}}, {"op": "remove", "path": "/1/id"}],
     "patch", 422, "missing_id", "/3"),
    ("id removed where nothing else wrote", [{"op": "replace", "path": "/1/v", "value": 1}, {"op": "replace", "path": "/0/v", "value": 1},
                                             {"op": "remove", "path": "/2/id"}], "patch", 422, "missing_id", "/2"),
    ("id removed, then the item moved", [{"op": "remove", "path": "/2/id"}, {"op": "add", "path": "/0", "value": {"id": 9}},
                                         {"op": "move", "from": "/3", "path": "/0"}, {"op": "replace", "path": "/2/v", "value": 5}],
     "patch", 422, "missing_id", "/0"),
    ("past the item limit", {"operations": [{"op": "insert", "id": n, "item": {"id": n}} for n in range(10, 20)]}, None, 413, "too_many_items", None),
]


@pytest.mark.parametrize("case", REFUSALS, ids=[case[0] for case in REFUSALS])
def test_refused_changes_apply_nothing(servers, case, tmp_path):
    _, body, form, status, code, pointer = case
    server = servers[0]
    name = new_session(server, {"items": [{"id": 1, "v": 0}, {"id": 2, "v": 0}, {"id": 3, "v": 0}]})
    before = items_of(servers[-1], name)
    content_type = "application/json-patch+json" if form == "patch" else "application/json"
    answered, answer = server.request("POST", f"/sessions/{name}/changes", body, content_type=content_type)
    if code == "too_many_items":
        # The memory store's limit is --max-session-items; these servers keep the default, so
        # the limit is reached by a server of its own below.
        return
    assert (answered, answer["error"]["code"]) == (status, code), answer
    assert answer["error"].get("pointer") == pointer, answer
    assert items_of(servers[-1], name) == before


SECTIONED_REFUSALS = [
    ("id held in another section", [{"op": "insert", "id": 1, "section": "b", "item": {"id": 1}}], 422, "duplicate_id", "/operations/0/id"),
    ("id changed by changes", [{"op": "update", "id": 3, "changes": {"set": {"id": 9}, "removed": []}}], 422, "invalid_operation", "/operations/0/changes"),
    ("id removed by changes", [{"op": "update", "id": 3, "changes": {"set": {}, "removed": ["id"]}}], 422, "missing_id", "/operations/0/changes"),
    ("before in another section", [{"op": "move", "id": 1, "section": "b", "before": 2}], 409, "change_conflict", "/operations/0/before"),
    ("moved item not there", [{"op": "remove", "id": 3}, {"op": "move", "id": 3, "section": "a"}], 409, "change_conflict", "/operations/1/id"),
]


@pytest.mark.parametrize("case", SECTIONED_REFUSALS, ids=[case[0] for case in SECTIONED_REFUSALS])
def test_refused_section_changes_apply_nothing(servers, case):
    # Sections a and b: an operation that reaches b alone must still see the items of a.
    _, operations, status, code, pointer = case
    server = servers[0]
    name = new_session(server, {"sections": [{"id": "a", "items": [{"id": 1}, {"id": 2}]}, {"id": "b", "items": [{"id": 3}, {"id": 4}]}]})
    before = items_of(servers[-1], name)
    answered, answer = server.request("POST", f"/sessions/{name}/changes", {"operations": operations})
    assert (answered, answer["error"]["code"]) == (status, code), answer
    assert answer["error"].get("pointer") == pointer, answer
    assert items_of(servers[-1], name) == before


def test_a_change_past_the_item_limit_applies_nothing(tmp_path):
    server = Server(["--max-session-items", "5"], str(tmp_path / "limit.log"))
    try:
        name = new_session(server, {"items": [{"id": n} for n in range(4)]})
        status, answer = server.request("POST", f"/sessions/{name}/changes", {"operations": [{"op": "insert", "id": 8, "item": {"id": 8}}, {"op": "insert", "id": 9, "item": {"id": 9}}]})
        assert (status, answer["error"]["code"]) == (413, "too_many_items"), answer
        assert items_of(server, name) == ([{"id": n} for n in range(4)], 0)
        status, answer = server.request("POST", f"/sessions/{name}/changes", [{"op": "add", "path": "/-", "value": {"id": 8}}, {"op": "add", "path": "/-", "value": {"id": 9}}],
                                        content_type="application/json-patch+json")
        assert (status, answer["error"]["code"]) == (413, "too_many_items"), answer
        assert items_of(server, name) == ([{"id": n} for n in range(4)], 0)
    finally:
        server.stop()


def test_conditions_work_as_on_update(servers):
    server = servers[0]
    name = new_session(server, {"items": [{"id": 1}]})
    change = {"operations": [{"op": "insert", "id": 2, "item": {"id": 2}}]}
    status, answer = server.request("POST", f"/sessions/{name}/changes", change, headers={"If-Match": '"3"'})
    assert (status, answer["error"]["code"]) == (412, "version_mismatch")
    status, answer = server.request("POST", f"/sessions/{name}/changes", {**change, "baseVersion": 0})
    assert status == 200 and answer["version"] == 1
    status, answer = server.request("POST", f"/sessions/{name}/changes", {**change, "baseVersion": 0})
    assert (status, answer["error"]["code"]) == (412, "version_mismatch")
    status, answer = server.request("POST", "/sessions/nobody/changes", change)
    assert (status, answer["error"]["code"]) == (404, "session_not_found")


# MARK: - Concurrency


def test_eight_writers_lose_nothing(servers):
    """8 writers x 100 single changes to one session: every change is applied once, versions
    follow without gaps, and the answers chain to the list held. One replica never answers
    `busy`; two on Redis may, when a change keeps losing its commit, and a writer sends it again."""
    initial = [{"id": n, "v": 0} for n in range(20)]
    name = new_session(servers[0], {"items": initial})
    answers, failures, resent = [], [], []
    lock = threading.Lock()

    def writer(number):
        server = servers[number % len(servers)]
        for step in range(100):
            ident = 1000 * (number + 1) + step
            if step % 3 == 2:
                operation = {"op": "update", "id": number, "changes": {"set": {"v": step}, "removed": []}}
            else:
                operation = {"op": "insert", "id": ident, "before": number if step % 2 else None, "item": {"id": ident, "w": number}}
            # 503 `busy`: on Redis the change lost its compare-and-set to the other replica past
            # the store's retries, and nothing was stored; the contract says to send it again.
            for _attempt in range(20):
                status, answer = server.request("POST", f"/sessions/{name}/changes", {"operations": [operation], "options": {"format": "keyed"}})
                if not (status == 503 and answer.get("error", {}).get("code") == "busy"):
                    break
                with lock:
                    resent.append(number)
            with lock:
                (answers if status == 200 else failures).append(answer)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    if len(servers) == 1:
        assert resent == []
    assert sorted(a["version"] for a in answers) == list(range(1, 801))
    assert all(a["baseVersion"] == a["version"] - 1 for a in answers)
    rows = labelled(initial, True)
    for answer in sorted(answers, key=lambda a: a["version"]):
        rows = keyed_apply(rows, answer["keyed"])
    held, version = items_of(servers[-1], name)
    assert version == 800
    assert [item for _, item in rows] == held
    assert len(held) == 20 + 8 * 67


def test_many_small_changes_keep_the_list_exact(servers):
    """Past 1,024 bodies gathered, a session is written anew into one: the list and its deltas
    stay exact across that."""
    server = servers[0]
    items = [{"id": n, "v": 0} for n in range(50)]
    name = new_session(server, {"items": items})
    for step in range(1100):
        ident = step % 50
        if step % 3 == 1:
            # A patch keeps the held items too, and adds its own body.
            patch = [{"op": "replace", "path": f"/{step % len(items)}/v", "value": step}]
            status, answer = server.request("POST", f"/sessions/{name}/changes", patch, content_type="application/json-patch+json")
            assert status == 200, answer
            expected = jsonpatch.apply_patch(items, patch)
            assert batch_replay(items, answer["delta"], expected) == expected
            items = expected
            continue
        change = {"operations": [{"op": "update", "id": ident, "changes": {"set": {"v": step}, "removed": []}}]}
        if step % 5 == 0:
            change["operations"].append({"op": "move", "id": ident, "before": None})
        status, answer = server.request("POST", f"/sessions/{name}/changes", change)
        assert status == 200, answer
        rows = keyed_apply(labelled(items, True), change["operations"])
        expected = [item for _, item in rows]
        assert batch_replay(items, answer["delta"], expected) == expected
        items = expected
    assert items_of(servers[-1], name) == (items, 1100)


def test_many_small_changes_keep_sections_exact(servers):
    """Section edits keep the sections they leave alone, and add a body each: past 1,024 the
    session is written anew, and the sections stay exact across that."""
    server = servers[0]
    sections = [{"id": s, "items": [{"id": s * 100 + n, "v": 0} for n in range(10)]} for s in range(5)]
    name = new_session(server, {"sections": sections})
    for step in range(1100):
        section = sections[step % 5]
        item = section["items"][step % 10]
        change = {"operations": [{"op": "update", "id": item["id"], "item": {"id": item["id"], "v": step}}]}
        status, answer = server.request("POST", f"/sessions/{name}/changes", change)
        assert status == 200, answer
        item["v"] = step
    assert items_of(servers[-1], name) == (sections, 1100)


# MARK: - Any change at all: never a 500


PATCH_PATHS = ["", "/sections", "/sections/0", "/sections/1", "/sections/-", "/sections/9", "/sections/0/items", "/sections/0/items/0",
               "/sections/0/items/-", "/sections/0/id", "/sections/0/items/0/id", "/0", "/1", "/-", "/0/id", "/0/v", "/items", "/x", "/0/x/y",
               "/~1", "/sections/0/items/0/v", "/sections/x"]
ANY_VALUES = st.one_of(
    st.sampled_from([{}, [], None, 1, "s", True, {"id": 1}, {"id": 77, "v": 1}, {"id": "a"}, {"sections": []}, {"items": []},
                     {"id": "z", "items": []}, {"id": "z", "items": [{"id": 1}]}, [{"id": 1}], [{"id": "q", "items": []}],
                     {"sections": [{"id": "a", "items": [{"id": 1}]}]}, [[]], {"id": [1]}, {"id": None}]),
    st.integers(-2, 50))


@st.composite
def any_patch(draw):
    operations = []
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "nope"]))
        operation = {"op": op, "path": draw(st.sampled_from(PATCH_PATHS))}
        if op in ("add", "replace", "test") or draw(st.booleans()):
            operation["value"] = draw(ANY_VALUES)
        if op in ("move", "copy") or draw(st.integers(0, 5)) == 0:
            operation["from"] = draw(st.sampled_from(PATCH_PATHS))
        operations.append(operation)
    return operations


@st.composite
def any_keyed(draw):
    operations = []
    ids = st.one_of(st.integers(-1, 12), st.sampled_from(["a", "b", "z", None, [], {}, {"id": 1, "occurrence": 0}, {"id": 1, "occurrence": 5}]))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["insert", "update", "move", "remove", "insertSection", "updateSection", "moveSection", "removeSection",
                                   "nope"]))
        operation = {"op": op}
        for member, values in [("id", ids), ("before", ids), ("section", ids), ("item", ANY_VALUES), ("changes", st.sampled_from(
                [{"set": {"v": 3}, "removed": []}, {"set": {"id": 4}}, {"removed": ["id"]}, {}, [], {"set": 1}]))]:
            if draw(st.integers(0, 2)) > 0:
                operation[member] = draw(values)
        operations.append(operation)
    return {"operations": operations}


def test_any_patch_or_keyed_change_is_answered_below_500(servers):
    """Arbitrary patches (the root and `/sections` included) and keyed operations, on flat and
    sectioned sessions: each is applied or refused with a 4xx, never a 500, and a refused
    one leaves the session as it was."""
    writer = servers[0]

    @checks
    @given(st.booleans(), st.one_of(any_patch(), any_keyed()))
    def check(sectioned, change):
        document = ({"sections": [{"id": "a", "items": [{"id": 1, "v": 0}, {"id": 2, "v": 0}]}, {"id": "b", "items": [{"id": 3, "v": 0}]}]}
                    if sectioned else {"items": [{"id": 1, "v": 0}, {"id": 2, "v": 0}, {"id": 3, "v": 0}]})
        name = new_session(writer, document)
        patch = isinstance(change, list)
        status, answer = writer.request("POST", f"/sessions/{name}/changes", change,
                                        content_type="application/json-patch+json" if patch else "application/json")
        assert status < 500, (document, change, answer)
        if status >= 400:
            held, version = items_of(writer, name)
            assert version == 0 and held == document["sections" if sectioned else "items"], (change, answer, held)
    check()
