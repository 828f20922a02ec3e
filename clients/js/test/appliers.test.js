// The parts that need no server: the event-stream reader, and appliers refusing what does not fit.
import assert from "node:assert/strict";
import { test } from "node:test";

import { DeltaMismatch, EventStreamParser, LiveArray, applyPatch, backoff, keyedReplay } from "../livedelta.js";

test("the event-stream reader: any split, CRLF, multi-line data, comments, multi-byte text", () => {
  const text = "retry: 2000\r\n\r\n: keep-alive\n\nid: k1.1\nevent: delta\ndata: {\"a\":\ndata: \"é✓\"}\n\nid: k1.2\revent: end\rdata: {}\r\r";
  const bytes = new TextEncoder().encode(text);
  for (let split = 0; split <= bytes.length; split++) {
    const events = [];
    const parser = new EventStreamParser((event) => events.push(event));
    parser.push(bytes.slice(0, split));
    parser.push(bytes.slice(split));
    assert.deepEqual(events, [
      { type: "delta", data: "{\"a\":\n\"é✓\"}", id: "k1.1" },
      { type: "end", data: "{}", id: "k1.2" },
    ], `split at ${split}`);
  }
});

const session = (items, options = {}) => ({ id: "s", version: 3, count: items.length, options: { idKey: "id", unique: true, ...options }, items });

test("a delta from another version is refused and changes nothing", () => {
  const array = new LiveArray(session([1, 2]));
  assert.throws(() => array.apply({ format: "keyed", keyed: [], version: 5, baseVersion: 4 }), DeltaMismatch);
  assert.deepEqual([array.items, array.version], [[1, 2], 3]);
});

test("a delta that does not fit is refused, whatever its format", () => {
  const cases = [
    { format: "keyed", keyed: [{ op: "remove", id: 9 }] },
    { format: "keyed", keyed: [{ op: "insert", id: 1, before: null, item: 1 }] },
    { format: "jsonPatch", jsonPatch: [{ op: "remove", path: "/7" }] },
    { format: "sequential", sequential: [{ op: "remove", position: 1, count: 5 }], items: [1] },
    // The replay gives [2, 1]; the event says the list is [1, 2].
    { delta: { deletions: [], insertions: [], moves: [{ source: 0, target: 1 }], reloads: [] }, items: [1, 2] },
    // Changed rows (`rows=changed`) that do not match the positions the delta fills.
    { delta: { deletions: [], insertions: [2], moves: [], reloads: [] }, rows: [3, 4], newCount: 3 },
    { delta: { deletions: [], insertions: [5], moves: [], reloads: [] }, rows: [3], newCount: 3 },
    { format: "sequential", sequential: [{ op: "insert", position: 0, count: 2 }], rows: [3], newCount: 4 },
  ];
  for (const data of cases) {
    const array = new LiveArray(session([1, 2]));
    assert.throws(() => array.apply({ ...data, version: 4, baseVersion: 3 }), DeltaMismatch, JSON.stringify(data));
    assert.deepEqual(array.items, [1, 2]);
  }
});

test("changed rows go where the delta puts them; the rows it keeps stay the same objects", () => {
  const kept = { id: 1 };
  const array = new LiveArray(session([kept, { id: 2, v: 0 }, { id: 3 }]));
  array.apply({
    delta: { deletions: [2], insertions: [0], moves: [], reloads: [{ source: 1, target: 2 }] },
    rows: [{ id: 0 }, { id: 2, v: 1 }], newCount: 3, version: 4, baseVersion: 3,
  });
  assert.deepEqual(array.items, [{ id: 0 }, { id: 1 }, { id: 2, v: 1 }]);
  assert.equal(array.items[1], kept);
  array.apply({
    format: "sequential", sequential: [{ op: "remove", position: 0, count: 1 }, { op: "change", position: 1, count: 1 }, { op: "insert", position: 2, count: 1 }],
    rows: [{ id: 2, v: 2 }, { id: 4 }], newCount: 3, version: 5, baseVersion: 4,
  });
  assert.deepEqual(array.items, [{ id: 1 }, { id: 2, v: 2 }, { id: 4 }]);
});

test("a version without a delta is refused: the follower reads the session instead", () => {
  const array = new LiveArray(session([1, 2]));
  assert.throws(() => array.apply({ animation: "reloadSections", version: 4, baseVersion: 3 }), DeltaMismatch);
});

test("keyed updates by dotted idKey, with field changes", () => {
  const old = [{ movie: { id: "a" }, t: 1, gone: true }, { movie: { id: "b" }, t: 2 }];
  const next = keyedReplay(old, [
    { op: "update", id: "a", changes: { set: { t: 5 }, removed: ["gone"] } },
    { op: "move", id: "b", before: "a" },
  ], { idKey: "movie.id" });
  assert.deepEqual(next, [{ movie: { id: "b" }, t: 2 }, { movie: { id: "a" }, t: 5 }]);
  assert.equal(next[0], old[1], "an item the delta does not touch stays the same object");
});

test("a patch copies only what it writes", () => {
  const old = [{ id: 1, t: "a" }, { id: 2, t: "b" }];
  const next = applyPatch(old, [{ op: "replace", path: "/1/t", value: "c" }, { op: "test", path: "/1/t", value: "c" }]);
  assert.deepEqual(old, [{ id: 1, t: "a" }, { id: 2, t: "b" }]);
  assert.deepEqual(next, [{ id: 1, t: "a" }, { id: 2, t: "c" }]);
  assert.equal(next[0], old[0]);
});

test("back-off: jittered, doubling from the first delay, never past the longest", () => {
  for (let attempt = 0; attempt < 12; attempt++) {
    const ceiling = Math.min(32000, 1000 * 2 ** attempt);
    for (let i = 0; i < 50; i++) {
      const wait = backoff(attempt);
      assert.ok(wait >= ceiling / 2 && wait <= ceiling, `${attempt}: ${wait}`);
    }
  }
});
