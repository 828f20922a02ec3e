// Following a session against the real binary: through a restart (Redis) with no version twice
// or missed, bearer tokens in the header, a refused token or a missing session stopping with
// the reason (no loop), the end of a session, long polling, a lost event read afresh, a silent
// stream noticed by the watchdog.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { LiveDeltaClient, LiveDeltaError } from "../livedelta.js";
import { mintToken, recordingFetch, secretFile, sleep, startRedis, startServer, until } from "./support.js";

function recorder() {
  const seen = { versions: [], resets: [], deltas: 0, states: [], ended: null, stopped: null };
  return {
    seen,
    callbacks: {
      onChange: (array, event) => {
        seen.versions.push(array.version);
        if (event.type === "reset") seen.resets.push(event.reason);
        else seen.deltas++;
      },
      onState: (state) => seen.states.push(state),
      onEnd: (reason) => (seen.ended = reason),
      onStop: (error) => (seen.stopped = error),
    },
  };
}

// A fetch that drops the event of one version from every event stream, as a faulty proxy would.
function droppingVersion(version) {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!String(url).includes("/events")) return response;
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buffer = "";
    const body = response.body.pipeThrough(new TransformStream({
      transform(chunk, controller) {
        buffer += decoder.decode(chunk, { stream: true });
        const events = buffer.split("\n\n");
        buffer = events.pop();
        for (const event of events) if (!new RegExp(`^id: \\w+\\.${version}$`, "m").test(event)) controller.enqueue(encoder.encode(`${event}\n\n`));
      },
    }));
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

const increasing = (versions) => versions.every((version, i) => i === 0 || version > versions[i - 1]);

describe("following a session", () => {
  test("through a server restart (Redis store): no version twice, none missed, equal to GET", async () => {
    const redis = await startRedis();
    let server = await startServer(["--session-store", redis.url]);
    try {
      const client = new LiveDeltaClient(server.url);
      await client.putSession("restart", [1, 2, 3]);
      const { seen, callbacks } = recorder();
      const live = client.live("restart", { format: "keyed", minDelay: 100, maxDelay: 400, ...callbacks });
      await until(() => live.array.version === 0, "version 0");
      const write = async (n) => {
        for (let i = 0; i < n; i++) {
          const session = await client.getSession("restart");
          await client.update("restart", [...session.items.slice(1), session.version + 10]);
        }
      };
      await write(30);
      await until(() => live.array.version === 30, "version 30");
      await server.stop();
      server = await startServer(["--session-store", redis.url], server.port);
      // Versions committed at once, whether or not the follower is back yet: the new process
      // holds no history of its own, and catches the follower up from the session's log in
      // Redis, each version as a delta.
      await write(30);
      const final = await client.getSession("restart");
      await until(() => live.array.version === final.version, `version ${final.version}`);
      assert.deepEqual(live.array.items, final.items);
      assert.ok(increasing(seen.versions), `versions: ${seen.versions}`);
      // Every version from 0 to 60, each exactly once: the stream resumed from its last id.
      assert.deepEqual(seen.versions, Array.from({ length: 61 }, (_, i) => i));
      assert.deepEqual(seen.resets, ["start"]);
      assert.ok(seen.states.includes("reconnecting"));
      live.close();
    } finally {
      await server.stop();
      await redis.stop();
    }
  });

  describe("with tokens", () => {
    let server;
    let secret;
    before(async () => {
      secret = secretFile();
      server = await startServer(["--auth", "jwt", "--jwt-secret-file", secret.path]);
    });
    after(async () => {
      await server.stop();
      secret.remove();
    });

    test("a bearer token goes in the Authorization header of every call and of the stream", async () => {
      const calls = [];
      let asked = 0;
      const client = new LiveDeltaClient(server.url, {
        fetch: recordingFetch(calls),
        token: () => {
          asked++;
          return mintToken(secret.secret, { tenant: "acme" });
        },
      });
      await client.putSession("tokens", [1]);
      const { callbacks } = recorder();
      const live = client.live("tokens", { format: "batch", ...callbacks });
      await until(() => live.array.version === 0, "version 0");
      await client.update("tokens", [1, 2]);
      await until(() => live.array.version === 1, "version 1");
      assert.deepEqual(live.array.items, [1, 2]);
      live.close();
      assert.ok(calls.every((call) => call.headers.Authorization?.startsWith("Bearer ")));
      assert.ok(calls.some((call) => call.url.includes("/sessions/tokens/events")));
      assert.equal(asked, 1, "one token, kept while it is taken");
    });

    test("a refused token: asked again once, then the follower stops and says why", async () => {
      let asked = 0;
      const calls = [];
      const client = new LiveDeltaClient(server.url, {
        fetch: recordingFetch(calls),
        token: () => {
          asked++;
          return "not-a-token";
        },
      });
      const { seen, callbacks } = recorder();
      const live = client.live("tokens", { ...callbacks, minDelay: 10 });
      await live.done;
      assert.ok(seen.stopped instanceof LiveDeltaError);
      assert.equal(seen.stopped.status, 401);
      assert.match(seen.stopped.message, /token was refused/);
      assert.equal(asked, 2);
      await sleep(300);
      assert.equal(calls.length, 2, "no loop");
      assert.equal(seen.states.at(-1), "stopped");
    });

    test("an expired token is replaced and the stream goes on", async () => {
      let asked = 0;
      const client = new LiveDeltaClient(server.url, {
        token: ({ refresh }) => {
          asked++;
          // The first token is refused (expired); the one asked for after the 401 is good.
          return refresh ? mintToken(secret.secret, { tenant: "acme" }) : mintToken(secret.secret, { tenant: "acme", exp: 1000, iat: 900 });
        },
      });
      const live = client.live("tokens", { format: "keyed" });
      await until(() => live.array.version !== null, "the first event");
      assert.equal(asked, 2);
      live.close();
    });
  });

  describe("on one server", () => {
    let server;
    let client;
    before(async () => {
      server = await startServer();
      client = new LiveDeltaClient(server.url);
    });
    after(() => server.stop());

    test("a session that does not exist: stopped with a 404 at once, not retried", async () => {
      const calls = [];
      const missing = new LiveDeltaClient(server.url, { fetch: recordingFetch(calls) });
      const { seen, callbacks } = recorder();
      const live = missing.live("nobody-here", { ...callbacks, minDelay: 10 });
      await live.done;
      assert.equal(seen.stopped.status, 404);
      assert.equal(seen.stopped.code, "session_not_found");
      await sleep(200);
      assert.equal(calls.length, 1);
    });

    test("a deleted session ends its followers with the reason", async () => {
      await client.putSession("ending", [1]);
      const { seen, callbacks } = recorder();
      const live = client.live("ending", callbacks);
      await until(() => live.array.version === 0, "version 0");
      await client.deleteSession("ending");
      await live.done;
      assert.equal(seen.ended, "deleted");
      assert.equal(seen.states.at(-1), "ended");
      assert.equal(seen.stopped, null);
    });

    test("long polling gives the same versions", async () => {
      await client.putSession("polled", { sections: [{ id: "a", items: [1, 2] }] });
      const { seen, callbacks } = recorder();
      const live = client.live("polled", { transport: "poll", format: "jsonPatch", pollWait: 2, ...callbacks });
      await until(() => live.array.version === 0, "version 0");
      for (let i = 1; i <= 10; i++) await client.update("polled", { sections: [{ id: "a", items: [i + 1, i] }, { id: i % 2 ? "b" : "c", items: [] }] });
      await until(() => live.array.version === 10, "version 10");
      assert.deepEqual({ sections: live.array.sections }, { sections: (await client.getSession("polled")).sections });
      assert.deepEqual(seen.versions, Array.from({ length: 11 }, (_, i) => i));
      live.close();
    });

    test("an event lost on the way: the gap is noticed by version and the session read afresh", async () => {
      await client.putSession("gappy", [0]);
      const dropping = new LiveDeltaClient(server.url, { fetch: droppingVersion(3) });
      const { seen, callbacks } = recorder();
      const live = dropping.live("gappy", { format: "keyed", ...callbacks });
      await until(() => live.array.version === 0, "version 0");
      for (let i = 1; i <= 6; i++) await client.update("gappy", [i, i - 1]);
      await until(() => live.array.version === 6, "version 6");
      assert.deepEqual(live.array.items, [6, 5]);
      assert.equal(seen.resets.length, 2);
      assert.match(seen.resets[1], /a delta from version 3 arrived at version 2/);
      assert.ok(increasing(seen.versions), `versions: ${seen.versions}`);
      live.close();
    });

    test("a fresh read the app cannot use stops too, and the session is not read again", async () => {
      await client.putSession("unusable-read", [{ id: 1, title: "a" }]);
      const calls = [];
      const dropping = new LiveDeltaClient(server.url, { fetch: recordingFetch(calls, droppingVersion(3)) });
      const { seen, callbacks } = recorder();
      const onChange = (array, event) => {
        if (event.type === "reset" && array.version > 0) throw new TypeError("this app cannot show the session read afresh");
        callbacks.onChange(array, event);
      };
      const live = dropping.live("unusable-read", { format: "keyed", ...callbacks, onChange, minDelay: 10, maxDelay: 20 });
      await until(() => live.array.version === 0, "version 0");
      for (let i = 1; i <= 4; i++) await client.update("unusable-read", [{ id: 1, title: `t${i}` }]);
      await until(() => seen.stopped !== null, "stopped");
      assert.equal(seen.stopped?.name, "UnusableEvent");
      assert.equal(seen.stopped.session, "unusable-read");
      assert.equal(seen.stopped.event, "read");
      assert.ok(seen.stopped.cause instanceof TypeError);
      await sleep(200);
      const reads = calls.filter((call) => !call.url.includes("/events"));
      assert.equal(reads.length, 1, `one read after the gap, not read again: ${reads.map((call) => call.url)}`);
    });

    // An app whose rendering throws on an item it cannot show (here a null item): the follower
    // stops with an UnusableEvent naming the session and version, and never asks for it again.
    const rendering = (seen) => (array, event) => {
      seen.titles = array.items.map((item) => item.title.toUpperCase());
      seen.versions.push(array.version);
      if (event.type === "reset") seen.resets.push(event.reason);
    };

    test("an event the app cannot use stops following with why, and is not asked for again", async () => {
      await client.putSession("unusable", [{ id: 1, title: "a" }]);
      const calls = [];
      const counting = new LiveDeltaClient(server.url, { fetch: recordingFetch(calls) });
      const { seen, callbacks } = recorder();
      const live = counting.live("unusable", { ...callbacks, onChange: rendering(seen), minDelay: 10, maxDelay: 20 });
      await until(() => live.array.version === 0, "version 0");
      await client.update("unusable", [null, { id: 1, title: "a" }]);
      await client.update("unusable", [{ id: 1, title: "b" }]);
      await live.done;
      assert.equal(seen.stopped?.name, "UnusableEvent");
      assert.equal(seen.stopped.session, "unusable");
      assert.equal(seen.stopped.event, "delta");
      assert.equal(seen.stopped.version, 1);
      assert.ok(seen.stopped.cause instanceof TypeError);
      assert.equal(seen.states.at(-1), "stopped");
      await sleep(200);
      assert.equal(calls.length, 1, "one connection: the event is not asked for again");
    });

    test("unusable: readAfresh passes the event by to the session whole, and follows on", async () => {
      await client.putSession("passed", [{ id: 1, title: "a" }]);
      const first = client.live("passed", { format: "keyed" });
      await until(() => first.array.version === 0, "version 0");
      const token = first.lastId;
      first.close();
      await client.update("passed", [null, { id: 1, title: "a" }]);
      await client.update("passed", [{ id: 1, title: "b" }]);
      const { seen, callbacks } = recorder();
      const live = client.live("passed", { ...callbacks, onChange: rendering(seen), since: token, unusable: "readAfresh" });
      await until(() => live.array.version === 2, "version 2");
      assert.deepEqual(seen.titles, ["B"]);
      assert.equal(seen.resets.length, 1);
      assert.match(seen.resets[0], /session passed: the delta at version 1 could not be used/);
      await client.update("passed", [{ id: 1, title: "c" }]);
      await until(() => live.array.version === 3, "version 3");
      assert.deepEqual(seen.titles, ["C"]);
      assert.equal(seen.stopped, null);
      live.close();
    });

    test("a replaced session's reset says so", async () => {
      await client.putSession("again", [1]);
      const { seen, callbacks } = recorder();
      const live = client.live("again", callbacks);
      await until(() => live.array.version === 0, "version 0");
      await client.putSession("again", [2]);
      await until(() => live.array.items[0] === 2, "the new life");
      assert.deepEqual(seen.resets, ["start", "replaced"]);
      live.close();
    });

    test("resuming from a token kept from before: every version after it, as deltas", async () => {
      await client.putSession("kept", [0]);
      const first = client.live("kept", { format: "keyed" });
      await until(() => first.array.version === 0, "version 0");
      await client.update("kept", [1]);
      await until(() => first.array.version === 1, "version 1");
      const token = first.lastId;
      first.close();
      await client.update("kept", [2]);
      await client.update("kept", [3]);
      const versions = [];
      const resumed = client.follow("kept", {
        since: token,
        onDelta: (data) => versions.push(data.version),
        onReset: (data) => versions.push(`reset ${data.version}`),
      });
      await until(() => versions.length === 2, () => `versions 2 and 3 (got ${versions})`);
      assert.deepEqual(versions, [2, 3]);
      resumed.close();
    });

    test("pauseWhenHidden: a hidden page lets go of its stream, and catches up when shown", async () => {
      const listeners = [];
      globalThis.document = { visibilityState: "visible", addEventListener: (type, listener) => listeners.push(listener), removeEventListener() {} };
      const show = (state) => {
        globalThis.document.visibilityState = state;
        for (const listener of listeners) listener();
      };
      try {
        await client.putSession("hidden", [1]);
        const { seen, callbacks } = recorder();
        const live = client.live("hidden", { pauseWhenHidden: true, ...callbacks });
        await until(() => live.array.version === 0, "version 0");
        show("hidden");
        await until(() => seen.states.at(-1) === "paused", "paused");
        await client.update("hidden", [2]);
        await sleep(300);
        assert.equal(live.array.version, 0, "nothing arrives while hidden");
        show("visible");
        await until(() => live.array.version === 1, "version 1 once shown");
        assert.deepEqual(seen.versions, [0, 1]);
        assert.ok(!seen.states.includes("reconnecting"));
        live.close();
      } finally {
        delete globalThis.document;
      }
    });

    test("a stream that goes silent is dropped by the watchdog and opened again", async () => {
      await client.putSession("silent", [1]);
      let streams = 0;
      const stalling = new LiveDeltaClient(server.url, {
        fetch: async (url, init) => {
          const response = await fetch(url, init);
          if (!String(url).includes("/events") || ++streams > 1) return response;
          // The first stream delivers its first bytes, then nothing ever again.
          const reader = response.body.getReader();
          const first = await reader.read();
          const body = new ReadableStream({
            start(controller) {
              controller.enqueue(first.value);
              init.signal?.addEventListener("abort", () => {
                controller.error(new Error("aborted"));
                reader.cancel().catch(() => {});
              });
            },
          });
          return new Response(body, { status: 200, headers: response.headers });
        },
      });
      const live = stalling.live("silent", { format: "keyed", heartbeatTimeout: 400, minDelay: 50, maxDelay: 100 });
      await until(() => live.array.version === 0, "version 0");
      await client.update("silent", [2]);
      await until(() => live.array.version === 1, "version 1 through the second stream", 5000);
      assert.equal(streams, 2);
      live.close();
    });
  });
});
