// LiveDelta's browser client: follow a session's events, and apply keyed deltas to a
// container of elements, one element per item, by key. No build step and no dependencies:
// copy this file, or import it from a LiveDelta server (/clients/livedelta.js).
//
//   import { follow, KeyedList } from "/clients/livedelta.js";
//   const list = new KeyedList(document.querySelector("ul"), (item) => item.title);
//   follow("/sessions/feed-42", {
//     onReset: (data) => list.reset(data.items),
//     onDelta: (data) => list.apply(data.keyed),
//     onState: (state, version) => console.log(state, version),
//   });

/**
 * Follows a session: opens its event stream in the keyed format, resumes from the last event
 * after any disconnect (the browser's own reconnection, or a new connection with `since`
 * where the server went away), and reports the connection's state.
 * Returns an object whose close() stops following.
 */
export function follow(sessionURL, { onReset, onDelta, onEnd, onState = () => {}, query = "format=keyed" } = {}) {
  let lastId = null;
  let version = null;
  let source = null;
  let closed = false;
  let retryTimer = null;

  const open = () => {
    if (closed) return;
    const since = lastId ? `&since=${encodeURIComponent(lastId)}` : "";
    source = new EventSource(`${sessionURL}/events?${query}${since}`);
    onState("connecting", version);
    source.onopen = () => onState("live", version);
    // A reset and a delta both bring the client to the version they carry.
    const take = (handler) => (event) => {
      const data = JSON.parse(event.data);
      lastId = event.lastEventId;
      version = data.version;
      handler?.(data);
      onState("live", version);
    };
    source.addEventListener("reset", take(onReset));
    source.addEventListener("delta", take(onDelta));
    source.addEventListener("end", (event) => {
      onEnd?.(JSON.parse(event.data));
      onState("ended", version);
      stop();
    });
    source.addEventListener("shutdown", () => {
      // The server is stopping: reconnect (perhaps to another replica) and resume.
      reopen(200);
    });
    source.onerror = () => {
      // The browser reconnects by itself (sending Last-Event-ID) unless the answer was not a
      // stream (a restarting server, a 503); then this opens a new one with `since`.
      if (source.readyState === EventSource.CLOSED) reopen(1000);
      else onState("reconnecting", version);
    };
  };

  const reopen = (delay) => {
    source?.close();
    onState("reconnecting", version);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(open, delay);
  };

  const stop = () => {
    closed = true;
    clearTimeout(retryTimer);
    source?.close();
  };

  open();
  return { close: stop };
}

/**
 * A container whose children are the items of a flat session, in order, keyed by the items'
 * id. `render(item, element)` fills an element for an item. Moves animate (FLIP: each moved
 * element starts where it was and slides to its new place).
 */
export class KeyedList {
  constructor(container, render, { idKey = "id", tag = "li", animate = true } = {}) {
    this.container = container;
    this.render = render;
    this.idKey = idKey;
    this.tag = tag;
    this.animate = animate;
  }

  key(id) {
    return JSON.stringify(id);
  }

  element(item) {
    const element = document.createElement(this.tag);
    element.dataset.key = this.key(item[this.idKey]);
    this.render(item, element);
    return element;
  }

  find(id) {
    const key = this.key(id);
    for (const child of this.container.children) if (child.dataset.key === key) return child;
    throw new Error(`no element for id ${key}`);
  }

  /** Replaces every child with the items given. */
  reset(items) {
    this.container.replaceChildren(...items.map((item) => this.element(item)));
  }

  /** Applies keyed operations (remove, move, insert, update) in order. */
  apply(operations) {
    const before = this.animate ? this.positions() : null;
    for (const operation of operations) {
      switch (operation.op) {
        case "remove":
          this.find(operation.id).remove();
          break;
        case "move":
          this.place(this.find(operation.id), operation.before);
          break;
        case "insert":
          this.place(this.element(operation.item), operation.before);
          break;
        case "update": {
          const element = this.find(operation.id);
          if (operation.item) {
            element.replaceChildren();
            this.render(operation.item, element);
          } else if (operation.changes) {
            // changes: "fields": the new values of changed fields, and removed ones.
            const item = { ...JSON.parse(element.dataset.item ?? "{}"), ...operation.changes.set };
            for (const name of operation.changes.removed ?? []) delete item[name];
            element.replaceChildren();
            this.render(item, element);
          }
          break;
        }
        default:
          throw new Error(`unknown operation ${operation.op}`);
      }
    }
    if (before) this.slide(before);
  }

  place(element, beforeId) {
    const anchor = beforeId === null || beforeId === undefined ? null : this.find(beforeId);
    this.container.insertBefore(element, anchor);
  }

  positions() {
    const positions = new Map();
    for (const child of this.container.children) positions.set(child.dataset.key, child.getBoundingClientRect().top);
    return positions;
  }

  slide(before) {
    for (const child of this.container.children) {
      const top = before.get(child.dataset.key);
      if (top === undefined) {
        child.animate?.([{ opacity: 0 }, { opacity: 1 }], { duration: 200 });
        continue;
      }
      const shift = top - child.getBoundingClientRect().top;
      if (shift !== 0) child.animate?.([{ transform: `translateY(${shift}px)` }, { transform: "none" }], { duration: 250, easing: "ease-out" });
    }
  }
}
