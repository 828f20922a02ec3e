// Windows against the real binary: a live array of 20 rows of a long session holds exactly the
// session's rows where its window says, through commits anywhere and scrolls (each one delta,
// never a reset), over streams and long polls.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { LiveDeltaClient, windowQuery } from "../livedelta.js";
import { startServer, until } from "./support.js";

describe("windows", () => {
  let server;
  before(async () => (server = await startServer()));
  after(async () => server?.stop());

  const rows = (n, start = 0) => Array.from({ length: n }, (_, i) => ({ id: start + i, v: 0 }));

  /** The follower's rows equal the session's in its window at its version. */
  async function matches(client, id, live) {
    const whole = await client.getSession(id);
    if (whole.version !== live.array.version) return false;
    const { offset, count, total } = live.array.window;
    return total === whole.items.length && JSON.stringify(live.array.items) === JSON.stringify(whole.items.slice(offset, offset + count));
  }

  // Keyed (the default), and the two formats of positions carrying only the rows they change.
  const spellings = [
    ["sse", {}], ["poll", {}], ["sse", { format: "batch", rows: "changed" }], ["poll", { format: "sequential", rows: "changed" }],
  ];
  for (const [transport, spelling] of spellings) {
    const named = [transport, spelling.format, spelling.rows].filter(Boolean).join(", ");
    test(`a window follows commits and scrolls without a reset (${named})`, async () => {
      const client = new LiveDeltaClient(server.url);
      const id = `window-${transport}-${spelling.format ?? "keyed"}`;
      await client.putSession(id, rows(2_000));
      const events = [];
      const carried = [];
      const live = client.live(id, {
        ...spelling, window: { offset: 100, limit: 20 }, transport, pollWait: 1, minDelay: 50, maxDelay: 200,
        onChange: (_, event) => {
          events.push(event.type);
          if (event.type === "delta") carried.push(event.data.rows ? "rows" : event.data.items ? "items" : "neither");
        },
      });
      await until(() => live.array.version === 0, "the first window");
      assert.deepEqual(live.array.items.map((item) => item.id), Array.from({ length: 20 }, (_, i) => 100 + i));
      assert.deepEqual(live.array.window, { offset: 100, count: 20, total: 2_000 });
      // An insert at the top shifts the offset window: one row out at the bottom, one in at the top.
      await client.changes(id, [{ op: "insert", id: -1, item: { id: -1, v: 0 }, before: 0 }]);
      await until(() => live.array.version === 1, "version 1");
      assert.deepEqual(live.array.items[0], { id: 99, v: 0 });
      // Commits inside and far below.
      await client.changes(id, [{ op: "update", id: 105, item: { id: 105, v: 5 } }, { op: "remove", id: 110 }]);
      await client.changes(id, [{ op: "update", id: 1_500, item: { id: 1_500, v: 1 } }]);
      await until(() => live.array.version === 3, "version 3");
      assert.ok(await matches(client, id, live));
      // Scrolls: one delta each, never a reset.
      for (const offset of [110, 400, 390]) {
        const before = live.array.version;
        live.moveWindow({ offset, limit: 20 });
        await until(() => live.array.window.offset === offset, `offset ${offset}`);
        assert.equal(live.array.version, before);
        assert.ok(await matches(client, id, live));
      }
      live.moveWindow({ after: 1_000, limit: 10, overscan: 2 });
      await until(() => live.array.window.after === 1_000, "after 1000");
      assert.deepEqual(live.array.items.map((item) => item.id), Array.from({ length: 14 }, (_, i) => 999 + i));
      await client.changes(id, [{ op: "remove", id: 1_000 }]);
      await until(() => live.array.version === 4, "version 4");
      assert.equal(live.array.window.after, 999);
      assert.ok(await matches(client, id, live));
      assert.deepEqual(events.filter((type) => type === "reset"), ["reset"]);
      // Each delta carried only its changed rows where asked; keyed carries neither.
      assert.deepEqual(new Set(carried), new Set([spelling.rows ? "rows" : "neither"]));
      live.close();
    });
  }

  test("a window of a sectioned session holds whole sections through commits and a scroll", async () => {
    const client = new LiveDeltaClient(server.url);
    const shelf = (n, items) => ({ id: `s${n}`, title: `Shelf ${n}`, items: items.map((id) => ({ id, v: 0 })) });
    const shelves = Array.from({ length: 30 }, (_, n) => shelf(n, [n * 10, n * 10 + 1]));
    await client.putSession("shelves", { sections: shelves });
    const events = [];
    const live = client.live("shelves", { window: { after: "s4", limit: 3 }, format: "keyed", onChange: (_, event) => events.push(event.type) });
    const held = async () => {
      const whole = await client.getSession("shelves");
      const { offset, count, total } = live.array.window;
      return whole.version === live.array.version && total === whole.sections.length
        && JSON.stringify(live.array.sections) === JSON.stringify(whole.sections.slice(offset, offset + count));
    };
    await until(() => live.array.version === 0, "the first window");
    assert.deepEqual(live.array.sections.map((section) => section.id), ["s5", "s6", "s7"]);
    // An item moves into the window from far away, a section above is removed (the window goes
    // with its anchor), and a section's title changes inside.
    const next = shelves.filter((section) => section.id !== "s1").map((section) => ({ ...section, items: [...section.items] }));
    next[4].items.push(next[20].items.shift());
    next[5].title = "Renamed";
    await client.update("shelves", { sections: next });
    await until(() => live.array.version === 1, "version 1");
    assert.deepEqual(live.array.window, { offset: 4, count: 3, total: 29, after: "s4" });
    assert.ok(await held());
    live.moveWindow({ offset: 20, limit: 4 });
    await until(() => live.array.window.offset === 20, "offset 20");
    assert.ok(await held());
    assert.deepEqual(events.filter((type) => type === "reset"), ["reset"]);
    live.close();
  });

  test("a read of a window gives its rows and the token to follow it from", async () => {
    const client = new LiveDeltaClient(server.url);
    await client.putSession("read-window", rows(50));
    const read = await client.getSession("read-window", { window: { before: 10, limit: 3 } });
    assert.deepEqual(read.items.map((item) => item.id), [7, 8, 9]);
    assert.deepEqual(read.window, { offset: 7, count: 3, total: 50, before: 10 });
    const deltas = [];
    const resets = [];
    const states = [];
    const follower = client.follow("read-window", {
      window: { before: 10, limit: 3 }, since: read.token, onReset: (data) => resets.push(data), onDelta: (data) => deltas.push(data),
      onState: (state) => states.push(state),
    });
    // Once it follows: a version committed between the read and the follow, of a session nobody
    // followed, is not kept, and would be a reset (of three rows).
    await until(() => states.includes("live"), "following");
    await client.changes("read-window", [{ op: "remove", id: 8 }]);
    await until(() => follower.version === 1, "version 1");
    follower.close();
    // Started from the read: no reset, and the delta of its rows alone.
    assert.deepEqual(resets, []);
    assert.deepEqual(deltas[0].keyed.map((operation) => operation.op), ["remove", "insert"]);
    assert.deepEqual(deltas[0].window, { offset: 6, count: 3, total: 49, before: 10 });
    await assert.rejects(client.getSession("read-window", { window: { after: "x", limit: 3 } }), (error) => error.code === "anchor_not_found");
    assert.throws(() => windowQuery({ offset: 1, after: 2, limit: 3 }), TypeError);
    assert.deepEqual(windowQuery({ after: "7", limit: 2 }), { limit: 2, after: '"7"' });
  });
});
