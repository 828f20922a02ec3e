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
The same runs through a session's update, and for sectioned collections (sections moving,
coming and going, items moving between them, headers and items changing, empty sections).
With `changes: "fields"`, every changed item says exactly which fields changed (set, removed),
under `compareKeys`/`ignoreKeys` too, and a `jsonPatch` still reaches the new document exactly.
With `nested`, a changed row's list comes as its own delta in the answer's format, and each
replays the old row's list to the new one (flat rows, and rows in sections).
"""
import json
import os
import sys
import urllib.request

import jsonpatch
from hypothesis import HealthCheck, given, settings, strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PythonSupport"))
from livedelta_testing import batch_replay  # noqa: E402
from replayers import android_apply, changed, keyed, keyed_apply, sectioned_android_apply, sectioned_batch_replay, sectioned_keyed_apply  # noqa: E402,F401

URL = sys.argv[1]


def post(path, body, method="POST"):
    request = urllib.request.Request(URL + path, data=json.dumps(body).encode(), method=method,
                                     headers={"Content-Type": "application/json",
                                              "Authorization": "Bearer " + os.environ["LIVEDELTA_TOKEN"]})
    with urllib.request.urlopen(request) as answer:
        return json.loads(answer.read() or b"null")


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


@st.composite
def shelves(draw, items_key="items"):
    """Sections with unique ids, some empty, holding items whose ids are unique across them."""
    ids = draw(st.lists(st.integers(0, 6), max_size=6, unique=True))
    items = draw(st.lists(st.integers(0, 25), max_size=25, unique=True))
    sections = [{"id": f"s{i}", "title": draw(st.integers(0, 1)), items_key: []} for i in ids]
    for item in items:
        if sections:
            sections[draw(st.integers(0, len(sections) - 1))][items_key].append({"id": item, "v": draw(st.integers(0, 1))})
    return sections


@checks
@given(shelves(), shelves())
def diffs_of_sections_replay(old, new):
    answers = {f: post("/diff", {"old": {"sections": old}, "new": {"sections": new}, "options": {"format": f}}) for f in FORMATS[1:]}
    patched = jsonpatch.apply_patch({"sections": old}, answers["jsonPatch"]["jsonPatch"])
    assert patched == {"sections": new}, (old, new, answers["jsonPatch"]["jsonPatch"], patched)
    assert sectioned_android_apply(old, answers["sequential"]["sequential"], new) == new, (old, new, answers["sequential"])
    assert sectioned_keyed_apply(old, answers["keyed"]["keyed"]) == new, (old, new, answers["keyed"])
    batch = post("/diff", {"old": {"sections": old}, "new": {"sections": new}, "options": {"format": "batch"}})
    assert sectioned_batch_replay(old, batch["sectionDelta"], batch["itemDelta"], new) == new, (old, new, batch)
    fields = {f: post("/diff", {"old": {"sections": old}, "new": {"sections": new}, "options": {"format": f, "changes": "fields"}})
              for f in FORMATS}
    for reload in fields["batch"]["itemDelta"]["reloads"]:
        before = sections_after_stage_one(old, new)[reload["source"]["section"]][reload["source"]["item"]]
        after = new[reload["target"]["section"]]["items"][reload["target"]["item"]]
        assert normalized(reload["changes"]) == normalized(expected_changes(before, after, lambda k: True)), reload
    assert jsonpatch.apply_patch({"sections": old}, fields["jsonPatch"]["jsonPatch"]) == {"sections": new}
    assert sectioned_android_apply(old, fields["sequential"]["sequential"], new) == new
    assert all("payload" in op for op in fields["sequential"]["sequential"] if op["op"] == "change")
    assert sectioned_keyed_apply(old, fields["keyed"]["keyed"]) == new, (old, new, fields["keyed"])


@settings(max_examples=60, deadline=None)
@given(shelves("rows"), shelves("rows"))
def sections_under_another_items_key_replay(old, new):
    options = {"itemsKey": "rows"}
    post("/sessions/rows", {"sections": old, "options": options}, method="PUT")
    answer = post("/sessions/rows/update", {"sections": new, "options": {**options, "format": "jsonPatch"}})
    assert jsonpatch.apply_patch({"sections": old}, answer["jsonPatch"]) == {"sections": new}
    post("/sessions/rows", {"sections": old, "options": options}, method="PUT")
    answer = post("/sessions/rows/delta", {"sections": new, "options": {**options, "format": "sequential"}})
    assert sectioned_android_apply(old, answer["sequential"], new, items_key="rows") == new
    answer = post("/sessions/rows/delta", {"sections": new, "options": {**options, "format": "keyed"}})
    assert sectioned_keyed_apply(old, answer["keyed"], items_key="rows") == new


def a_section_header_change_is_patched_field_by_field():
    """A section whose title changed and whose rows did not: the patch sets the title (and
    removes or adds header fields), and leaves the rows alone, under any items key."""
    for key in ["items", "rows"]:
        old = [{"id": "a", "title": "Watching", "note": "x", key: [{"id": 1, "v": 0}, {"id": 2, "v": 0}]},
               {"id": "b", "title": "Done", key: [{"id": 3, "v": 0}]}]
        new = [{"id": "a", "title": "Now watching", "colour": "red", key: [{"id": 1, "v": 0}, {"id": 2, "v": 0}]},
               {"id": "b", "title": "Done", key: [{"id": 3, "v": 0}]}]
        patch = post("/diff", {"old": {"sections": old}, "new": {"sections": new},
                               "options": {"format": "jsonPatch", "itemsKey": key}})["jsonPatch"]
        assert sorted((op["op"], op["path"]) for op in patch) == [
            ("add", "/sections/0/colour"), ("remove", "/sections/0/note"), ("replace", "/sections/0/title")], patch
        assert jsonpatch.apply_patch({"sections": old}, patch) == {"sections": new}


def sections_after_stage_one(old, new):
    """Each new section's rows after the section stage: a surviving section's old rows."""
    by_id = {section["id"]: section for section in old}
    return [by_id[s["id"]]["items"] if s["id"] in by_id else s["items"] for s in new]


def expected_changes(old, new, counts):
    return {"set": {k: v for k, v in new.items() if counts(k) and (k not in old or old[k] != v)},
            "removed": [k for k in old if counts(k) and k not in new]}


def normalized(changes):
    return {"set": changes["set"], "removed": sorted(changes["removed"])}


# Names a pointer must escape; the last two put a combining mark (U+0301) after the / and the
# ~, where the two make one grapheme that an escaper working by grapheme would pass over.
FIELD_NAMES = ["a", "b", "c/d", "e~", "f/\u0301", "g~\u0301"]
fielded = st.lists(st.builds(lambda i, fields: {"id": i, **fields}, st.integers(0, 20),
                             st.dictionaries(st.sampled_from(FIELD_NAMES), st.integers(0, 2), max_size=4)),
                   max_size=20, unique_by=lambda item: item["id"])
filters = st.sampled_from([{}, {"ignoreKeys": ["b"]}, {"compareKeys": ["a", "c/d"]}])


@checks
@given(fielded, fielded, filters)
def field_changes_are_exact(old, new, filter_options):
    counts = (lambda k: k not in filter_options["ignoreKeys"]) if "ignoreKeys" in filter_options else \
        (lambda k: k in filter_options["compareKeys"]) if "compareKeys" in filter_options else (lambda k: True)
    options = {**filter_options, "changes": "fields"}
    answers = {f: post("/diff", {"old": old, "new": new, "options": {**options, "format": f}}) for f in FORMATS}
    batch = answers["batch"]["delta"]
    for reload in batch["reloads"]:
        expected = expected_changes(old[reload["source"]], new[reload["target"]], counts)
        assert normalized(reload["changes"]) == normalized(expected), (reload, expected)
        assert expected["set"] or expected["removed"]
    payloads = {op["position"]: op.get("payload") for op in answers["sequential"]["sequential"] if op["op"] == "change"}
    assert sorted(payloads) == sorted(r["target"] for r in batch["reloads"])
    for reload in batch["reloads"]:
        assert normalized(payloads[reload["target"]]) == normalized(reload["changes"])
    rows, _ = android_apply(old, answers["sequential"]["sequential"], new)
    assert [r["id"] for r in rows] == [r["id"] for r in new]
    assert jsonpatch.apply_patch(old, answers["jsonPatch"]["jsonPatch"]) == new, (old, new, answers["jsonPatch"])
    updates = {json.dumps(op["id"]): op["changes"] for op in answers["keyed"]["keyed"] if op["op"] == "update"}
    for reload in batch["reloads"]:
        assert normalized(updates[json.dumps(new[reload["target"]]["id"])]) == normalized(reload["changes"])


inner_lists = st.lists(st.builds(lambda i, v: {"id": i, "v": v}, st.integers(0, 8), st.integers(0, 1)),
                       max_size=8, unique_by=lambda item: item["id"])
rows_with_lists = st.lists(st.builds(lambda i, t, movies: {"id": i, "t": t, "movies": movies},
                                     st.integers(0, 12), st.integers(0, 1), inner_lists),
                           max_size=12, unique_by=lambda item: item["id"])


@checks
@given(rows_with_lists, rows_with_lists, st.sampled_from(["rows", "fields"]))
def nested_lists_replay(old, new, detail):
    """A changed row's list comes as its own delta, in the answer's format, and replays."""
    options = {"nested": {"movies": {}}, "changes": detail}
    answers = {f: post("/diff", {"old": old, "new": new, "options": {**options, "format": f}}) for f in FORMATS}
    assert jsonpatch.apply_patch(old, answers["jsonPatch"]["jsonPatch"]) == new, (old, new, answers["jsonPatch"])
    # sequential: the rows replay; each change with a nested delta turns the old row's list into
    # the new one by the same replayer, and says nothing else of that field.
    old_by_id = {row["id"]: row for row in old}
    rows, _ = android_apply(old, answers["sequential"]["sequential"], new)
    assert rows == new
    for op in answers["sequential"]["sequential"]:
        if op["op"] == "change" and "nested" in op:
            row = new[op["position"]]
            inner = op["nested"]["movies"]
            replayed, _ = android_apply(old_by_id[row["id"]]["movies"], inner["sequential"], row["movies"])
            assert replayed == row["movies"]
            assert "movies" not in op.get("payload", {"set": {}})["set"]
    # keyed: updates carry the nested list's keyed operations.
    assert [row for _, row in keyed_apply(keyed(old, True), answers["keyed"]["keyed"])] == new
    for op in answers["keyed"]["keyed"]:
        if op["op"] == "update" and "nested" in op:
            row_id = op["id"]
            before = old_by_id[row_id]["movies"]
            after = next(r for r in new if r["id"] == row_id)["movies"]
            assert keyed_apply(keyed(before, True), op["nested"]["movies"]["keyed"]) == keyed(after, True)
    # batch: a reload with a nested delta holds a delta that replays the list.
    for reload in answers["batch"]["delta"]["reloads"]:
        if "nested" in reload:
            inner = reload["nested"]["movies"]["delta"]
            before, after = old[reload["source"]]["movies"], new[reload["target"]]["movies"]
            assert batch_replay(before, inner, after) == after


@checks
@given(rows_with_lists, rows_with_lists, st.sampled_from(["rows", "fields"]))
def nested_lists_in_sections_replay(old, new, detail):
    """The same within sections: rows split between two sections, their lists nested."""
    def split(rows):
        return [{"id": "a", "items": rows[:len(rows) // 2]}, {"id": "b", "items": rows[len(rows) // 2:]}]
    old_s, new_s = split(old), split(new)
    options = {"nested": {"movies": {}}, "changes": detail}
    answers = {f: post("/diff", {"old": {"sections": old_s}, "new": {"sections": new_s}, "options": {**options, "format": f}})
               for f in FORMATS}
    assert jsonpatch.apply_patch({"sections": old_s}, answers["jsonPatch"]["jsonPatch"]) == {"sections": new_s}
    assert sectioned_android_apply(old_s, answers["sequential"]["sequential"], new_s) == new_s
    assert sectioned_keyed_apply(old_s, answers["keyed"]["keyed"]) == new_s
    stage_one = sections_after_stage_one(old_s, new_s)
    for reload in answers["batch"]["itemDelta"]["reloads"]:
        if "nested" in reload:
            before = stage_one[reload["source"]["section"]][reload["source"]["item"]]["movies"]
            after = new_s[reload["target"]["section"]]["items"][reload["target"]["item"]]["movies"]
            assert batch_replay(before, reload["nested"]["movies"]["delta"], after) == after


@st.composite
def repeated_shelves(draw):
    """Sections holding scalar items whose ids repeat, within and across sections."""
    ids = draw(st.lists(st.integers(0, 4), max_size=4, unique=True))
    return [{"id": i, "items": draw(st.lists(st.sampled_from(["A", "B", "C"]), max_size=5))} for i in ids]


def numbered_sections(sections):
    """Sections with each item keyed as the keyed format names repeated ids: {id, occurrence},
    counted over the whole collection in order."""
    seen, result = {}, []
    for section in sections:
        rows = []
        for item in section["items"]:
            seen[item] = seen.get(item, 0) + 1
            rows.append({"id": {"id": item, "occurrence": seen[item]}, "item": item})
        result.append({"id": section["id"], "items": rows})
    return result


@checks
@given(repeated_shelves(), repeated_shelves())
def sections_with_repeated_ids_replay(old, new):
    answers = {f: post("/diff", {"old": {"sections": old}, "new": {"sections": new}, "options": {"format": f, "unique": False}})
               for f in FORMATS[1:]}
    assert jsonpatch.apply_patch({"sections": old}, answers["jsonPatch"]["jsonPatch"]) == {"sections": new}
    assert sectioned_android_apply(old, answers["sequential"]["sequential"], new) == new
    # Keyed: the replayer keys items by {id, occurrence}; inserted items arrive as the item
    # itself, so compare keys in order and items by value.
    operations = [{**op, "item": {"id": op["id"], "item": op["item"]}} if op["op"] == "insert" else op for op in answers["keyed"]["keyed"]]
    replayed = sectioned_keyed_apply(numbered_sections(old), operations)
    assert [[row["item"] for row in s["items"]] for s in replayed] == [s["items"] for s in new]
    assert replayed == numbered_sections(new)




diffs_of_objects_replay()
field_changes_are_exact()
nested_lists_replay()
nested_lists_in_sections_replay()
sections_with_repeated_ids_replay()
diffs_of_sections_replay()
sections_under_another_items_key_replay()
a_section_header_change_is_patched_field_by_field()
diffs_of_repeated_ids_replay()
session_updates_replay()
print("formats: jsonPatch (jsonpatch package), sequential (Android replayer) and keyed answers replay exactly")
