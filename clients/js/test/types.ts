// A program using the client's declarations, compiled by `tsc --strict --noEmit` (package.test.js):
// where a declaration and the module drift apart in a way a user would meet, this stops compiling.
import {
  LiveDeltaClient, LiveDeltaError, LiveArray, DeltaMismatch, applyPatch, keyedReplay, itemKeys, jsonEqual,
  UnusableEvent, windowQuery, type DeltaEvent, type KeyedOperation, type SessionState, type WindowEvent, type WindowPlace,
} from "livedelta";
import { LiveList, renderItem, textOf } from "livedelta/dom";

async function main(container: HTMLElement): Promise<void> {
  const client = new LiveDeltaClient("https://deltas.example.com", { token: async ({ refresh }) => (refresh ? "new" : "old"), retries: 1 });
  const answer = await client.diff([1, 2], [2, 1], { format: "keyed" });
  const operations: KeyedOperation[] = answer.keyed ?? [];
  const replayed: unknown[] = keyedReplay([1, 2], operations);
  const session: SessionState = await client.getSession("feed-42");
  const written = await client.update("feed-42", [{ id: 1, title: "Ann" }], { idKey: "id" }, { ifMatch: session.version, idempotencyKey: "k1" });
  const version: number = written.version;
  await client.changes("feed-42", [{ op: "insert", id: 2, before: null, item: { id: 2 } }]);
  await client.patch("feed-42", [{ op: "replace", path: "/0/title", value: "Ann B." }], { format: "jsonPatch" });
  await client.deleteSession("feed-42", { ifMatch: `"${version}"` });
  const list = new LiveList(container, { render: (item, element) => renderItem(item, element), animate: false });
  const live = client.live("feed-42", {
    format: "jsonPatch",
    onChange: (collection: LiveArray, event) => {
      list.show(collection);
      const at: number | null = event.version;
      void at;
    },
    onStop: (error: LiveDeltaError) => {
      if (error instanceof UnusableEvent) console.log(error.session, error.event, error.version, error.eventId, error.cause);
      console.log(error.code, error.status, error.transient);
    },
    unusable: "readAfresh",
    onState: (state, detail) => console.log(state, detail.version),
  });
  const items = live.array.items;
  const follower = client.follow("feed-42", {
    onDelta: (data: DeltaEvent) => console.log(data.baseVersion, data.version),
    onReset: (data, info) => console.log(data.items, info.first),
  });
  follower.close();
  // A window of a long feed: read, followed, scrolled.
  const page: SessionState = await client.getSession("feed-42", { window: { offset: 100, limit: 50 } });
  const place: WindowPlace | undefined = page.window;
  const windowed = client.live("feed-42", {
    window: { after: "item-7", limit: 50, overscan: 10 },
    since: page.token,
    onChange: (collection, event) => console.log(collection.window?.total, event.type === "window"),
  });
  windowed.moveWindow({ offset: 150, limit: 50 });
  client.follow("feed-42", { window: { before: 3, limit: 20 }, onWindow: (data: WindowEvent) => console.log(data.window.offset) }).close();
  console.log(place?.offset, windowQuery({ limit: 5 }).limit);
  await live.done;
  const patched: number[] = applyPatch([1, 2], [{ op: "remove", path: "/0" }]);
  console.log(replayed, items, patched, itemKeys([1, 1], { unique: false }), jsonEqual(1, 1), textOf({}), new DeltaMismatch("x").message);
}

void main;
