"""Appliers of LiveDelta's delta formats written from each format's documentation, not from
LiveDelta's code: an Android `ListUpdateCallback` replayer (flat and sectioned), a keyed one
(flat and sectioned), and UIKit's reading of a sectioned batch. The contract and window checks
share them."""
import json

from livedelta_testing import batch_replay


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
            current = rows[index(key)][1]
            rows[index(key)] = (key, op["item"] if "item" in op else changed(current, op["changes"], op.get("nested")))
        else:
            raise AssertionError(op)
    return rows


def changed(item, changes, nested=None):
    """An item with what a field-by-field change says: fields set, fields removed, and nested
    lists changed by their own keyed operations."""
    result = {**{k: v for k, v in item.items() if k not in changes["removed"]}, **changes["set"]}
    for field, answer in (nested or {}).items():
        result[field] = [row for _, row in keyed_apply(keyed(item[field], True), answer["keyed"])]
    return result


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


def sectioned_android_apply(old, operations, new, items_key="items"):
    """Sections as a list, each with its rows: section operations (an inserted section arrives
    with its new rows), row operations within sections (a move may cross sections), section
    changes (the header: every field but the rows)."""
    sections = [dict(section) for section in old]
    header = lambda section: {k: v for k, v in section.items() if k != items_key}
    for op in operations:
        kind = op["op"]
        if kind == "removeSections":
            del sections[op["position"]:op["position"] + op["count"]]
        elif kind == "moveSection":
            sections.insert(op["to"], sections.pop(op["from"]))
        elif kind == "insertSections":
            sections[op["position"]:op["position"]] = [dict(s) for s in new[op["position"]:op["position"] + op["count"]]]
        elif kind == "changeSections":
            for index in range(op["position"], op["position"] + op["count"]):
                sections[index] = {**header(new[index]), items_key: sections[index][items_key]}
        elif kind in ("remove", "insert", "change"):
            section, p, n = op["section"], op["position"], op["count"]
            rows = list(sections[section][items_key])
            if kind == "remove":
                assert p + n <= len(rows)
                del rows[p:p + n]
            elif kind == "insert":
                rows[p:p] = new[section][items_key][p:p + n]
            else:
                rows[p:p + n] = new[section][items_key][p:p + n]
            sections[section] = {**sections[section], items_key: rows}
        elif kind == "move":
            source = list(sections[op["from"]["section"]][items_key])
            row = source.pop(op["from"]["item"])
            sections[op["from"]["section"]] = {**sections[op["from"]["section"]], items_key: source}
            target = list(sections[op["to"]["section"]][items_key])
            assert op["to"]["item"] <= len(target)
            target.insert(op["to"]["item"], row)
            sections[op["to"]["section"]] = {**sections[op["to"]["section"]], items_key: target}
        else:
            raise AssertionError(op)
    return sections


def sectioned_keyed_apply(old, operations, items_key="items"):
    """Sections by id, each a keyed list of items: as a page of keyed lists would apply it."""
    sections = [(json.dumps(s["id"]), {k: v for k, v in s.items() if k != items_key},
                 [(json.dumps(i["id"]), i) for i in s[items_key]]) for s in old]

    def section_index(key):
        keys = [k for k, _, _ in sections]
        assert key in keys, (key, keys)
        return keys.index(key)

    def find_item(key):
        for s, (_, _, rows) in enumerate(sections):
            for r, (k, _) in enumerate(rows):
                if k == key:
                    return s, r
        raise AssertionError(("no item", key))

    for op in operations:
        kind, key = op["op"], json.dumps(op["id"])
        before = None if op.get("before") is None else json.dumps(op["before"])
        if kind == "removeSection":
            sections.pop(section_index(key))
        elif kind in ("moveSection", "insertSection"):
            if kind == "moveSection":
                element = sections.pop(section_index(key))
            else:
                value = op["section"]
                keys = [json.dumps(k) for k in op["keys"]] if "keys" in op else [json.dumps(i["id"]) for i in value[items_key]]
                rows = [(k, {"id": json.loads(k), "item": i}) for k, i in zip(keys, value[items_key])] if "keys" in op \
                    else list(zip(keys, value[items_key]))
                element = (key, {k: v for k, v in value.items() if k != items_key}, rows)
            sections.insert(section_index(before), element) if before is not None else sections.append(element)
        elif kind == "updateSection":
            index = section_index(key)
            sections[index] = (key, {k: v for k, v in op["section"].items() if k != items_key}, sections[index][2])
        elif kind == "remove":
            s, r = find_item(key)
            sections[s][2].pop(r)
        elif kind in ("move", "insert"):
            if kind == "move":
                s, r = find_item(key)
                element = sections[s][2].pop(r)
            else:
                element = (key, op["item"])
            rows = sections[section_index(json.dumps(op["section"]))][2]
            if before is None:
                rows.append(element)
            else:
                rows.insert([k for k, _ in rows].index(before), element)
        elif kind == "update":
            s, r = find_item(key)
            sections[s][2][r] = (key, op["item"] if "item" in op else changed(sections[s][2][r][1], op["changes"], op.get("nested")))
        else:
            raise AssertionError(op)
    return [{**fields, items_key: [item for _, item in rows]} for _, fields, rows in sections]


def sectioned_batch_replay(old, section_delta, item_delta, new, items_key="items"):
    """A sectioned batch as UIKit reads it: the sections' batch first (an inserted section comes
    with its new rows, the others keep their old ones), then, section by section, each final
    section filled by its insertions, the rows moved into it and then its remaining rows in
    order; reloaded rows and sections' own fields read the new data last."""
    header = lambda section: {k: v for k, v in section.items() if k != items_key}
    staged = batch_replay(old, {**section_delta, "reloads": []}, new)
    inserted = set(section_delta["insertions"])
    path = lambda p: (p["section"], p["item"])
    deletions = {path(p) for p in item_delta["deletions"]}
    moved = {path(m["source"]): path(m["target"]) for m in item_delta["moves"]}
    result = []
    for s, section in enumerate(staged):
        if s in inserted:
            result.append(section)
            continue
        rows = [None] * len(new[s][items_key])
        for p in item_delta["insertions"]:
            if p["section"] == s:
                rows[p["item"]] = new[s][items_key][p["item"]]
        for (fs, fi), (ts, ti) in moved.items():
            if ts == s:
                rows[ti] = staged[fs][items_key][fi]
        remaining = [row for i, row in enumerate(section[items_key]) if (s, i) not in deletions and (s, i) not in moved]
        assert len(remaining) == rows.count(None), (s, remaining, rows)
        left = iter(remaining)
        rows = [row if row is not None else next(left) for row in rows]
        for reload in item_delta["reloads"]:
            if reload["target"]["section"] == s:
                rows[reload["target"]["item"]] = new[s][items_key][reload["target"]["item"]]
        result.append({**header(section), items_key: rows})
    for reload in section_delta["reloads"]:
        target = reload["target"]
        result[target] = {**header(new[target]), items_key: result[target][items_key]}
    return result
