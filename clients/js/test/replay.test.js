// 1,000 random updates (flat objects, sections, repeated ids), each session followed in every
// format at once: after every version each follower's array equals GET of that version.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { LiveDeltaClient } from "../livedelta.js";
import { startServer, until } from "./support.js";

/** A small seeded generator (mulberry32), so that a failure can be run again. */
function random(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (low, high) => low + Math.floor(next() * (high - low + 1));
  const sample = (values, count) => {
    const pool = [...values];
    const chosen = [];
    while (chosen.length < count && pool.length) chosen.push(pool.splice(int(0, pool.length - 1), 1)[0]);
    return chosen;
  };
  return { next, int, sample };
}

const range = (n) => Array.from({ length: n }, (_, i) => i);

const kinds = {
  flat: {
    // Over 20 items on a side a version has no delta: it must come as a reset.
    options: { dataCountAnimationThreshold: 20 },
    follow: [["batch"], ["sequential"], ["jsonPatch"], ["keyed"], ["keyed", "fields"], ["jsonPatch", "fields"], ["sequential", "fields"]],
    make: (r) => r.sample(range(40), r.int(0, 25)).map((id) => ({ id, v: r.int(0, 2), ...(r.next() < 0.3 ? { note: `n${r.int(0, 3)}` } : {}) })),
  },
  sectioned: {
    options: {},
    follow: [["batch"], ["sequential"], ["jsonPatch"], ["keyed"], ["keyed", "fields"]],
    make: (r) => {
      const sections = r.sample(range(7), r.int(0, 6)).map((id) => ({ id: `s${id}`, title: `t${r.int(0, 1)}`, items: [] }));
      for (const id of r.sample(range(30), r.int(0, 25))) {
        if (sections.length) sections[r.int(0, sections.length - 1)].items.push({ id, v: r.int(0, 1) });
      }
      return { sections };
    },
  },
  repeated: {
    options: { unique: false },
    follow: [["batch"], ["sequential"], ["jsonPatch"], ["keyed"]],
    make: (r) => range(r.int(0, 18)).map(() => ["A", "B", "C", "D", 1, 2][r.int(0, 5)]),
  },
  "repeated, in sections": {
    options: { unique: false },
    follow: [["sequential"], ["jsonPatch"], ["keyed"]],
    make: (r) => ({ sections: r.sample(range(4), r.int(0, 4)).map((id) => ({ id, items: range(r.int(0, 5)).map(() => ["A", "B", "C"][r.int(0, 2)]) })) }),
  },
};

const collectionOf = (session) => (session.sections ? { sections: session.sections } : session.items);

describe("1,000 random updates, every format, equal to GET at every version", () => {
  let server;
  let client;
  before(async () => {
    server = await startServer(["--max-subscribers-per-session", "50"]);
    client = new LiveDeltaClient(server.url);
  });
  after(() => server.stop());

  const counts = { flat: 400, sectioned: 300, repeated: 200, "repeated, in sections": 100 };
  for (const [kind, spec] of Object.entries(kinds)) {
    test(`${kind}: ${counts[kind]} updates`, async () => {
      const r = random(kind.length * 7919);
      const id = `replay-${kind.replaceAll(/[^a-z]/g, "")}`;
      await client.putSession(id, spec.make(r), spec.options);
      const followers = spec.follow.map(([format, changes]) => {
        const seen = { resets: 0, deltas: 0, rereads: 0, versions: [] };
        const follower = client.live(id, {
          format, changes,
          onChange: (array, event) => {
            if (event.type === "reset") {
              seen.resets++;
              if (!event.first) seen.rereads += event.reason === "reset" ? 0 : 1;
            } else {
              seen.deltas++;
            }
            seen.versions.push(array.version);
          },
        });
        return { follower, seen, name: `${format}${changes ? `/${changes}` : ""}` };
      });
      await until(() => followers.every(({ follower }) => follower.array.version === 0), "every follower at version 0");
      for (let step = 1; step <= counts[kind]; step++) {
        await client.update(id, spec.make(r));
        const session = await client.getSession(id);
        await until(() => followers.every(({ follower }) => follower.array.version === session.version), `every follower at version ${session.version}`);
        for (const { follower, name } of followers) {
          const array = follower.array;
          assert.deepEqual(array.sectioned ? { sections: array.sections } : array.items, collectionOf(session), `${name} at version ${session.version}`);
        }
      }
      for (const { follower, seen, name } of followers) {
        follower.close();
        // Never a version twice, never one out of order.
        for (let i = 1; i < seen.versions.length; i++) assert.ok(seen.versions[i] > seen.versions[i - 1], `${name}: ${seen.versions}`);
        assert.equal(seen.rereads, 0, `${name} never had to read the session afresh`);
        if (kind === "flat") assert.ok(seen.resets > 1, `${name}: versions over the threshold came as resets`);
        console.log(`${kind} ${name}: ${seen.deltas} deltas applied, ${seen.resets} resets (the first, and versions over the thresholds)`);
      }
    });
  }
});
