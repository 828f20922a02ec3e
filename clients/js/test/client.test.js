// Every call of the client against the real binary: answers decoded, conditions, errors with
// their codes, an Idempotency-Key on every write (the same on a retry), CORS-free Node use.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { LiveDeltaClient, LiveDeltaError, applyPatch } from "../livedelta.js";
import { recordingFetch, startServer } from "./support.js";

describe("the client, every call", () => {
  let server;
  let client;
  const calls = [];

  before(async () => {
    server = await startServer();
    client = new LiveDeltaClient(server.url, { fetch: recordingFetch(calls) });
  });
  after(() => server.stop());

  test("diff answers the delta in the format asked for", async () => {
    const old = [{ id: 1, title: "Alien" }, { id: 2, title: "Brazil" }];
    const next = [{ id: 2, title: "Brazil" }, { id: 1, title: "Alien (1979)" }];
    const batch = await client.diff(old, next);
    assert.deepEqual(batch.delta.moves, [{ source: 0, target: 1 }]);
    const patch = await client.diff(old, next, { format: "jsonPatch" });
    assert.deepEqual(applyPatch(old, patch.jsonPatch), next);
    const sectioned = await client.diff({ sections: [{ id: "a", items: [1, 2] }] }, { sections: [{ id: "a", items: [2] }] });
    assert.deepEqual(sectioned.itemDelta.deletions, [{ section: 0, item: 0 }]);
  });

  test("a session: create, put, get, update, append, delta, changes, patch, delete", async () => {
    const created = await client.createSession([1, 2, 3]);
    assert.equal(created.version, 0);
    assert.match(created.id, /^[A-Za-z0-9._-]+$/);
    assert.deepEqual((await client.getSession(created.id)).items, [1, 2, 3]);

    const put = await client.putSession("js-feed", [{ id: 1, title: "Ann" }, { id: 2, title: "Bob" }]);
    assert.deepEqual(put, { id: "js-feed", version: 0, count: 2 });
    const updated = await client.update("js-feed", [{ id: 2, title: "Bob" }, { id: 1, title: "Ann" }], { format: "keyed" }, { ifMatch: 0 });
    assert.equal(updated.version, 1);
    assert.deepEqual(updated.keyed, [{ op: "move", id: 1, before: null }]);
    const appended = await client.append("js-feed", [{ id: 3, title: "Cy" }]);
    assert.deepEqual(appended.delta.insertions, [2]);
    const preview = await client.delta("js-feed", [{ id: 3, title: "Cy" }]);
    assert.deepEqual(preview.delta.deletions, [0, 1]);
    assert.equal((await client.getSession("js-feed")).version, 2, "delta commits nothing");
    const changed = await client.changes("js-feed", [
      { op: "update", id: 2, changes: { set: { title: "Bob (away)" }, removed: [] } },
      { op: "insert", id: 4, before: null, item: { id: 4, title: "Dan" } },
    ], { format: "keyed" });
    assert.equal(changed.version, 3);
    const patched = await client.patch("js-feed", [{ op: "replace", path: "/0/title", value: "Bobby" }], { format: "jsonPatch" });
    assert.equal(patched.version, 4);
    assert.deepEqual(patched.jsonPatch, [{ op: "replace", path: "/0", value: { id: 2, title: "Bobby" } }]);
    assert.deepEqual((await client.getSession("js-feed")).items.map((item) => item.title), ["Bobby", "Ann", "Cy", "Dan"]);

    const sections = await client.putSession("js-shelf", { sections: [{ id: "a", title: "A", items: [1] }] });
    assert.equal(sections.sectionCount, 1);
    const moved = await client.update("js-shelf", { sections: [{ id: "a", title: "A", items: [] }, { id: "b", title: "B", items: [1] }] });
    assert.deepEqual(moved.sectionDelta.insertions, [1]);

    await client.deleteSession("js-feed", { ifMatch: 4 });
    await assert.rejects(client.getSession("js-feed"), (error) => error instanceof LiveDeltaError && error.status === 404 && !error.transient);
  });

  test("If-Match: a stale version is a 412 with its code, and the session is unchanged", async () => {
    await client.putSession("js-cond", [1]);
    await assert.rejects(client.update("js-cond", [1, 2], undefined, { ifMatch: 7 }), (error) => {
      assert.equal(error.status, 412);
      assert.equal(error.code, "version_mismatch");
      return true;
    });
    assert.deepEqual((await client.getSession("js-cond")).items, [1]);
  });

  test("a refused body says what and where", async () => {
    await assert.rejects(client.diff([{ id: 1 }, { id: 1 }], []), (error) => {
      assert.equal(error.status, 422);
      assert.equal(error.code, "duplicate_id");
      assert.equal(error.pointer, "/old/1");
      return true;
    });
  });

  test("every write carries an Idempotency-Key, each its own; reads carry none", async () => {
    calls.length = 0;
    await client.putSession("js-keys", [1]);
    await client.update("js-keys", [2]);
    await client.getSession("js-keys");
    const keys = calls.map((call) => call.headers["Idempotency-Key"]);
    assert.ok(keys[0] && keys[1] && keys[0] !== keys[1]);
    assert.equal(keys[2], undefined);
    calls.length = 0;
    await client.update("js-keys", [3], undefined, { idempotencyKey: "mine-1" });
    assert.equal(calls[0].headers["Idempotency-Key"], "mine-1");
  });

  test("a write the server refused before doing anything is retried with the same key", async () => {
    let refusals = 1;
    const seen = [];
    const flaky = new LiveDeltaClient(server.url, {
      fetch: (url, init) => {
        seen.push(init.headers["Idempotency-Key"]);
        if (refusals-- > 0) {
          return Promise.resolve(new Response(JSON.stringify({ error: { code: "too_many_subscribers", message: "busy" } }), {
            status: 503, headers: { "Retry-After": "0", "Content-Type": "application/json" },
          }));
        }
        return fetch(url, init);
      },
    });
    const answer = await flaky.update("js-keys", [4]);
    assert.ok(answer.version > 0);
    assert.equal(seen.length, 2);
    assert.equal(seen[0], seen[1]);
  });

  test("a write whose outcome is unknown (504) is retried with its key only, and committed once", async () => {
    await client.putSession("js-unknown", []);
    const keys = [];
    let unknown = 1;
    const stalled = new LiveDeltaClient(server.url, {
      fetch: async (url, init) => {
        keys.push(init.headers["Idempotency-Key"]);
        const answer = await fetch(url, init);
        // The write committed, but the server could not tell (its store did not answer).
        if (unknown-- > 0) {
          await answer.arrayBuffer();
          return new Response(JSON.stringify({ error: { code: "outcome_unknown", message: "not known" } }), {
            status: 504, headers: { "Retry-After": "0", "Content-Type": "application/json" },
          });
        }
        return answer;
      },
    });
    const answer = await stalled.append("js-unknown", [7]);
    assert.equal(answer.version, 1);
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1]);
    assert.deepEqual((await client.getSession("js-unknown")).items, [7]);
    // A call that may not be repeated is not: the 504 reaches the app.
    unknown = 1;
    await assert.rejects(stalled.append("js-unknown", [8], undefined, { repeatable: false }), (error) => error.status === 504 && error.code === "outcome_unknown");
  });

  test("a write whose answer is lost is sent again with its key and committed once", async () => {
    await client.putSession("js-lost", []);
    const keys = [];
    let lose = 1;
    const lossy = new LiveDeltaClient(server.url, {
      fetch: async (url, init) => {
        keys.push(init.headers["Idempotency-Key"]);
        const answer = await fetch(url, init);
        // The request got through and committed; its answer never reaches the app.
        if (lose-- > 0) {
          await answer.arrayBuffer();
          throw new TypeError("fetch failed: the connection was reset");
        }
        return answer;
      },
    });
    const answer = await lossy.append("js-lost", [7]);
    assert.equal(answer.version, 1);
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1]);
    const session = await client.getSession("js-lost");
    assert.deepEqual([session.version, session.items], [1, [7]]);
  });

  test("a connection that keeps failing: retried, then an error carrying the write's key", async () => {
    let sent = 0;
    const broken = new LiveDeltaClient(server.url, {
      retries: 1,
      fetch: () => {
        sent++;
        return Promise.reject(new TypeError("fetch failed"));
      },
    });
    await assert.rejects(broken.update("js-keys", [5]), (error) => error.transient && typeof error.idempotencyKey === "string");
    assert.equal(sent, 2);
  });
});
