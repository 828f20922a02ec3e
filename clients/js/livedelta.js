// LiveDelta's JavaScript client: every call of the API, a follower of a session's live events,
// and appliers that keep a plain array (or a list of sections) equal to the session, version by
// version. An ES module with no dependencies and no build step; it runs in current browsers and
// in Node 20. The DOM list is in ./dom.js. Types: ./livedelta.d.ts.

/** An answer that is not a success, with the server's error code, message and pointer. */
export class LiveDeltaError extends Error {
  constructor({ status = 0, code = "network_error", message, pointer, limit, retryAfter, cause } = {}) {
    super(message ?? code, cause === undefined ? undefined : { cause });
    this.name = "LiveDeltaError";
    this.status = status;
    this.code = code;
    this.pointer = pointer;
    this.limit = limit;
    /** Seconds the server asked to wait before trying again (`Retry-After`), or undefined. */
    this.retryAfter = retryAfter;
  }

  /**
   * Whether trying again later may succeed: a lost connection, a timeout, a server that is
   * busy, stopping or failing (408, 429, 5xx). Anything else (a missing session, a refused
   * token, a body the server will never take) fails the same way every time.
   */
  get transient() {
    return this.status === 0 || this.status === 408 || this.status === 429 || this.status >= 500;
  }
}

const JSON_TYPE = "application/json";
const PATCH_TYPE = "application/json-patch+json";

function randomKey() {
  if (globalThis.crypto?.randomUUID) return globalThis.crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
}

function delay(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

function retryAfterSeconds(response) {
  const value = response.headers.get("Retry-After");
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

async function errorOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON (a proxy's page): the status says what there is to say.
  }
  const error = body?.error ?? {};
  return new LiveDeltaError({
    status: response.status,
    code: error.code ?? `http_${response.status}`,
    message: error.message ?? `HTTP ${response.status}`,
    pointer: error.pointer,
    limit: error.limit,
    retryAfter: retryAfterSeconds(response),
  });
}

/** The version an `ETag` names (`"4"`), or undefined. */
function versionOf(response) {
  const tag = response.headers.get("ETag");
  const match = tag && /^"(\d+)"$/.exec(tag);
  return match ? Number(match[1]) : undefined;
}

/**
 * A LiveDelta server: `baseURL` (`https://deltas.example.com`, or "" for the page's own origin).
 * `token`: a bearer token, or a function `({ refresh }) => token` (async allowed) asked before
 * the first call and again, with `refresh: true`, after a 401 (once per call).
 */
export class LiveDeltaClient {
  constructor(baseURL = "", { token, fetch: fetchFunction, credentials, headers = {}, retries = 2 } = {}) {
    this.baseURL = String(baseURL).replace(/\/+$/, "");
    this.tokenSource = typeof token === "function" ? token : token === undefined ? null : () => token;
    this.fetch = fetchFunction ?? ((...args) => globalThis.fetch(...args));
    this.credentials = credentials;
    this.headers = headers;
    this.retries = retries;
    this.currentToken = undefined;
  }

  /** The token to send now (asked of the token function the first time, or with `refresh`). */
  async token(refresh = false) {
    if (!this.tokenSource) return null;
    if (refresh || this.currentToken === undefined) this.currentToken = (await this.tokenSource({ refresh })) ?? null;
    return this.currentToken;
  }

  url(path) {
    return `${this.baseURL}${path}`;
  }

  /** The path of a session, or of one of its routes. */
  static sessionPath(id, route = "") {
    return `/sessions/${encodeURIComponent(id)}${route}`;
  }

  /**
   * One HTTP call: the token (refreshed once after a 401), JSON in and out. A write carries an
   * `Idempotency-Key` (one per call, the same on its retries). Retried, after a jittered
   * back-off (with `Retry-After` as a floor), where the server refused it before doing anything
   * (429, 503) and, for calls that change nothing or change it the same way twice (GET, PUT,
   * DELETE, /diff, /delta), where the connection failed. Resolves with `{status, body, version,
   * location, headers}`; rejects with a `LiveDeltaError`.
   */
  async request(method, path, { body, contentType = JSON_TYPE, ifMatch, idempotencyKey, query, signal, repeatable } = {}) {
    const write = method !== "GET" && method !== "HEAD";
    const key = write ? (idempotencyKey ?? randomKey()) : undefined;
    const safeToRepeat = repeatable ?? (!write || method === "PUT" || method === "DELETE");
    const search = query ? `?${new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined))}` : "";
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const headers = { Accept: JSON_TYPE, ...this.headers };
      if (body !== undefined) headers["Content-Type"] = contentType;
      if (key) headers["Idempotency-Key"] = key;
      if (ifMatch !== undefined) headers["If-Match"] = typeof ifMatch === "number" ? `"${ifMatch}"` : String(ifMatch);
      const token = await this.token(false);
      if (token) headers.Authorization = `Bearer ${token}`;
      let response;
      try {
        response = await this.fetch(this.url(path + search), {
          method, headers, signal, credentials: this.credentials,
          body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
        });
      } catch (cause) {
        if (signal?.aborted) throw cause;
        const error = new LiveDeltaError({ message: `${method} ${path}: the connection failed (${cause?.message ?? cause})`, cause });
        error.idempotencyKey = key;
        if (!safeToRepeat || attempt >= this.retries) throw error;
        await delay(backoff(attempt, 250, 4000), signal);
        continue;
      }
      if (response.status === 401 && this.tokenSource && !refreshed) {
        refreshed = true;
        await this.token(true);
        attempt--;
        continue;
      }
      if (!response.ok) {
        const error = await errorOf(response);
        error.idempotencyKey = key;
        if ((response.status === 429 || response.status === 503) && attempt < this.retries) {
          await delay(Math.max((error.retryAfter ?? 0) * 1000, backoff(attempt, 250, 4000)), signal);
          continue;
        }
        throw error;
      }
      const text = response.status === 204 ? "" : await response.text();
      return {
        status: response.status, body: text ? JSON.parse(text) : null, version: versionOf(response),
        location: response.headers.get("Location") ?? undefined, headers: response.headers,
      };
    }
  }

  async #answer(method, path, options) {
    return (await this.request(method, path, options)).body;
  }

  /** `POST /diff`: the delta between two collections (arrays, or `{sections}`). */
  diff(old, next, options, { signal } = {}) {
    return this.#answer("POST", "/diff", { body: { old, new: next, options }, signal, repeatable: true });
  }

  /** `POST /sessions`: a new session with an id the server picks; `{id, version, ...}`. */
  createSession(collection, options, call = {}) {
    return this.#answer("POST", "/sessions", { ...call, body: { ...collectionBody(collection), options } });
  }

  /** `PUT /sessions/{id}`: creates the session, or replaces it (at version 0). */
  putSession(id, collection, options, call = {}) {
    return this.#answer("PUT", LiveDeltaClient.sessionPath(id), { ...call, body: { ...collectionBody(collection), options } });
  }

  /** `GET /sessions/{id}`: items or sections, version, counts, options. */
  getSession(id, call = {}) {
    return this.#answer("GET", LiveDeltaClient.sessionPath(id), call);
  }

  /** `POST /sessions/{id}/update`: commits the whole new collection; answers its delta. */
  update(id, collection, options, call = {}) {
    return this.#answer("POST", LiveDeltaClient.sessionPath(id, "/update"), { ...call, body: { ...collectionBody(collection), options } });
  }

  /** `POST /sessions/{id}/append`: appends items (or whole sections). */
  append(id, collection, options, call = {}) {
    return this.#answer("POST", LiveDeltaClient.sessionPath(id, "/append"), { ...call, body: { ...collectionBody(collection), options } });
  }

  /** `POST /sessions/{id}/delta`: the delta an update would answer, committing nothing. */
  delta(id, collection, options, call = {}) {
    return this.#answer("POST", LiveDeltaClient.sessionPath(id, "/delta"), {
      ...call, body: { ...collectionBody(collection), options }, repeatable: true,
    });
  }

  /** `POST /sessions/{id}/changes` with keyed operations (`insert`, `update`, `move`, `remove`, ...). */
  changes(id, operations, options, call = {}) {
    return this.#answer("POST", LiveDeltaClient.sessionPath(id, "/changes"), { ...call, body: { operations, options } });
  }

  /** `POST /sessions/{id}/changes` with an RFC 6902 patch; `format` and `changes` spell the answer. */
  patch(id, patch, { format, changes, ...call } = {}) {
    return this.#answer("POST", LiveDeltaClient.sessionPath(id, "/changes"), {
      ...call, body: patch, contentType: PATCH_TYPE, query: { format, changes },
    });
  }

  /** `DELETE /sessions/{id}`: ends the session; its followers get `end` with `deleted`. */
  async deleteSession(id, call = {}) {
    await this.request("DELETE", LiveDeltaClient.sessionPath(id), call);
  }

  /** Follows a session's events; see `Follower`. */
  follow(id, options = {}) {
    return new Follower(this, id, options);
  }

  /**
   * Follows a session and keeps a `LiveArray` of it: `onChange(array, event)` after each
   * version (a reset, a delta applied, or a fresh read where a delta did not fit).
   */
  live(id, { onChange = () => {}, onState, onEnd, onStop, ...options } = {}) {
    const array = new LiveArray();
    const follower = new Follower(this, id, {
      ...options, onState, onEnd, onStop,
      onReset: (data, info) => {
        array.reset(data);
        onChange(array, { type: "reset", version: array.version, ...info });
      },
      onDelta: (data) => {
        try {
          array.apply(data);
          onChange(array, { type: "delta", version: array.version, data });
        } catch (error) {
          if (!(error instanceof DeltaMismatch)) throw error;
          follower.reread(`the delta to version ${data.version} did not fit the list (${error.message})`);
        }
      },
    });
    follower.array = array;
    return follower;
  }
}

function collectionBody(collection) {
  if (Array.isArray(collection)) return { items: collection };
  if (collection && Array.isArray(collection.sections)) return { sections: collection.sections };
  if (collection && Array.isArray(collection.items)) return { items: collection.items };
  throw new TypeError("a collection is an array of items, or {sections: [...]}");
}

/** A jittered exponential back-off: about `first` ms for attempt 0, doubling, at most `most`. */
export function backoff(attempt, first = 1000, most = 32000) {
  const ceiling = Math.min(most, first * 2 ** Math.min(attempt, 30));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Reads `text/event-stream` bytes into events, as the HTML standard parses them. */
export class EventStreamParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.decoder = new TextDecoder();
    this.buffer = "";
    this.afterCR = false;
    this.reset();
  }

  reset() {
    this.type = "";
    this.data = [];
    this.id = undefined;
  }

  push(chunk) {
    let text = typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    // A chunk that ended in \r may have split a \r\n: its \n is not another line end.
    if (this.afterCR && text.startsWith("\n")) text = text.slice(1);
    this.buffer += text;
    let start = 0;
    const ends = /\r\n|\r|\n/g;
    for (let found = ends.exec(this.buffer); found; found = ends.exec(this.buffer)) {
      this.line(this.buffer.slice(start, found.index));
      start = found.index + found[0].length;
    }
    this.afterCR = this.buffer.endsWith("\r") && start === this.buffer.length;
    this.buffer = this.buffer.slice(start);
  }

  line(line) {
    if (line === "") {
      if (this.data.length > 0) this.onEvent({ type: this.type || "message", data: this.data.join("\n"), id: this.id });
      this.reset();
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.type = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.id = value;
  }
}

/** Reads an event id `<life>.<version>`. */
function position(id) {
  const match = typeof id === "string" && /^([0-9a-z]+)\.(\d+)$/.exec(id);
  return match ? { life: match[1], version: Number(match[2]) } : null;
}

/**
 * Follows one session's live events: over fetch-streamed server-sent events (so that an
 * `Authorization` header goes with them), or by long polling where streams do not get through.
 * Resumes by the last event id; backs off with jitter (1 s to 32 s, `Retry-After` as a floor);
 * reconnects where a stream goes silent past `heartbeatTimeout`; asks the token function again
 * after a 401 and stops, saying why, where the new token is refused too; checks every event by
 * version, so that the app never gets a version twice or a delta that does not start where it is
 * (a gap is a fresh read of the session, delivered as a reset).
 *
 * Callbacks: `onReset(data, {first, reason})` (the whole session, as GET answers it; `first`
 * false where it replaces what the app showed, after a gap or a new life of the session),
 * `onDelta(data)` (its `baseVersion` is the version the app is at), `onEnd(reason)` (the session
 * was deleted, expired or evicted), `onStop(error)` (a permanent error: nothing more will come),
 * `onState(state, detail)` with `connecting`, `live`, `reconnecting` (`{delay, error}`),
 * `paused`, `ended`, `stopped`.
 */
export class Follower {
  constructor(client, id, options = {}) {
    this.client = client;
    this.id = id;
    this.options = {
      format: "keyed", transport: "auto", heartbeatTimeout: 45000, minDelay: 1000, maxDelay: 32000, pollWait: 20,
      pauseWhenHidden: false, ...options,
    };
    this.lastId = options.since ?? null;
    this.life = position(this.lastId)?.life ?? null;
    this.version = null;
    this.state = "idle";
    this.stopped = false;
    this.failures = 0;
    this.silentStreams = 0;
    this.transport = this.options.transport === "poll" ? "poll" : "sse";
    this.controller = null;
    this.wake = null;
    this.done = this.#run();
    if (this.options.pauseWhenHidden && globalThis.document?.addEventListener) {
      this.visibility = () => {
        if (globalThis.document.visibilityState === "hidden") this.controller?.abort("hidden");
        else this.wake?.();
      };
      globalThis.document.addEventListener("visibilitychange", this.visibility);
    }
  }

  /** Stops following (idempotent). */
  close() {
    if (this.stopped) return;
    this.stopped = true;
    this.controller?.abort("closed");
    this.wake?.();
    if (this.visibility) globalThis.document.removeEventListener("visibilitychange", this.visibility);
    this.#state("stopped", { reason: "closed" });
  }

  #state(state, detail = {}) {
    if (this.state === state && state !== "reconnecting") return;
    this.state = state;
    this.options.onState?.(state, { version: this.version, ...detail });
  }

  #stop(error) {
    if (this.stopped) return;
    this.stopped = true;
    this.error = error;
    this.controller?.abort("stopped");
    this.#state("stopped", { error });
    this.options.onStop?.(error);
  }

  /** Reads the session afresh and delivers it as a reset (after a delta that did not fit). */
  reread(reason) {
    this.pendingReread = reason;
    this.controller?.abort("reread");
  }

  async #fresh(reason) {
    const data = await this.client.getSession(this.id);
    this.version = data.version;
    this.options.onReset?.(data, { first: false, reason });
  }

  async #run() {
    while (!this.stopped) {
      if (this.options.pauseWhenHidden && globalThis.document?.visibilityState === "hidden") {
        this.#state("paused");
        await new Promise((resolve) => (this.wake = resolve));
        continue;
      }
      this.controller = new AbortController();
      let retryAfter;
      try {
        if (this.pendingReread) {
          const reason = this.pendingReread;
          this.pendingReread = null;
          await this.#fresh(reason);
        }
        if (this.transport === "sse") await this.#stream(this.controller.signal);
        else await this.#poll(this.controller.signal);
        if (this.stopped) return;
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof LiveDeltaError && !error.transient) return this.#stop(error);
        retryAfter = error?.retryAfter;
        this.lastError = error;
      }
      if (this.stopped || this.pendingReread) continue;
      if (this.shutdownDelay !== undefined) {
        // The server is stopping: come back after the delay it gave, spread so that a deploy's
        // subscribers do not all arrive at once.
        const wait = this.shutdownDelay * (1 + Math.random());
        this.shutdownDelay = undefined;
        this.#state("reconnecting", { delay: wait, reason: "shutdown" });
        await this.#sleep(wait);
        continue;
      }
      const wait = Math.max((retryAfter ?? 0) * 1000, backoff(this.failures++, this.options.minDelay, this.options.maxDelay));
      this.#state("reconnecting", { delay: wait, error: this.lastError });
      await this.#sleep(wait);
    }
  }

  async #sleep(ms) {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = null;
  }

  #query(extra) {
    const { format, changes, catchUp } = this.options;
    const query = { format, changes, catchUp, ...extra };
    if (this.lastId) query.since = this.lastId;
    return `?${new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined))}`;
  }

  /** Opens a connection, asking for a new token once after a 401; throws a LiveDeltaError. */
  async #open(path, signal, accept) {
    let refreshed = false;
    for (;;) {
      const headers = { Accept: accept, ...this.client.headers };
      const token = await this.client.token(this.refreshToken === true);
      this.refreshToken = false;
      if (token) headers.Authorization = `Bearer ${token}`;
      this.#state("connecting");
      let response;
      try {
        response = await this.client.fetch(this.client.url(path), { headers, signal, credentials: this.client.credentials, cache: "no-store" });
      } catch (cause) {
        throw new LiveDeltaError({ message: `the connection failed (${cause?.message ?? cause})`, cause });
      }
      if (response.status === 401 && this.client.tokenSource && !refreshed) {
        refreshed = true;
        await this.client.token(true);
        continue;
      }
      if (!response.ok) {
        const error = await errorOf(response);
        if (response.status === 401) error.message = `the token was refused: ${error.message}`;
        throw error;
      }
      return response;
    }
  }

  async #stream(signal) {
    const path = LiveDeltaClient.sessionPath(this.id, "/events") + this.#query();
    const response = await this.#open(path, signal, "text/event-stream");
    if (!response.body?.getReader) {
      // No streamed bodies here: long polling works everywhere.
      this.transport = "poll";
      return;
    }
    const reader = response.body.getReader();
    let heard = false;
    let timer;
    const watch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.controller.abort("silent"), this.options.heartbeatTimeout);
    };
    const parser = new EventStreamParser((event) => {
      heard = true;
      this.#event(event.type, event.id, event.data);
    });
    this.#state("live");
    watch();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        watch();
        if (value?.length && !heard) this.silentStreams = 0;
        parser.push(value);
        if (this.stopped || this.ended) return;
      }
    } catch (cause) {
      if (this.stopped) return;
      if (signal.reason === "silent") {
        // Nothing, not even a heartbeat: a proxy that holds streams back, or a dead link.
        // After two such streams in a row, long polling (in auto mode).
        if (!heard && ++this.silentStreams >= 2 && this.options.transport === "auto") this.transport = "poll";
        throw new LiveDeltaError({ message: `no heartbeat for ${this.options.heartbeatTimeout} ms`, cause });
      }
      if (signal.aborted) return;
      throw new LiveDeltaError({ message: `the stream broke (${cause?.message ?? cause})`, cause });
    } finally {
      clearTimeout(timer);
    }
    if (!this.ended) throw new LiveDeltaError({ message: "the stream ended" });
  }

  async #poll(signal) {
    for (;;) {
      const path = LiveDeltaClient.sessionPath(this.id, "/changes") + this.#query({ wait: this.options.pollWait });
      const response = await this.#open(path, signal, JSON_TYPE);
      const page = await response.json();
      this.#state("live");
      for (const event of page.events) {
        this.#event(event.event, event.id, JSON.stringify(event.data), event.data);
        if (this.stopped || this.ended || this.pendingReread) return;
      }
      if (page.next === null || page.next === undefined) return;
      this.lastId = page.next;
      if (this.shutdownDelay !== undefined) return;
    }
  }

  #event(type, id, text, parsed) {
    const data = parsed ?? (text ? JSON.parse(text) : {});
    this.failures = 0;
    switch (type) {
      case "reset": {
        const first = this.version === null;
        this.lastId = id ?? this.lastId;
        this.life = position(id)?.life ?? this.life;
        this.version = data.version;
        this.options.onReset?.(data, { first, reason: first ? "start" : "reset" });
        return;
      }
      case "delta": {
        const at = position(id);
        if (this.version !== null && at && at.life === this.life && data.version <= this.version) {
          // Already shown (a resumed stream replays from an older id after a fresh read).
          this.lastId = id;
          return;
        }
        if (this.version === null || data.baseVersion !== this.version || (at && this.life && at.life !== this.life)) {
          // Not from where the app is: never apply it; read the session instead.
          this.lastId = id ?? this.lastId;
          return this.reread(`a delta from version ${data.baseVersion} arrived at version ${this.version}`);
        }
        if (!hasDelta(data)) {
          this.lastId = id ?? this.lastId;
          return this.reread(`version ${data.version} came without a delta (${data.animation ?? data.itemAnimation})`);
        }
        this.lastId = id ?? this.lastId;
        this.version = data.version;
        this.options.onDelta?.(data);
        return;
      }
      case "end":
        // Nothing more will come: not an error, and nothing to retry.
        this.ended = true;
        this.stopped = true;
        this.controller?.abort("ended");
        this.#state("ended", { reason: data.reason });
        this.options.onEnd?.(data.reason);
        return;
      case "shutdown":
        this.shutdownDelay = Number(data.retry ?? 1000);
        this.controller?.abort("shutdown");
        return;
      case "expired":
        // The token expired mid-stream: a new one, then resume at once.
        this.refreshToken = true;
        this.shutdownDelay = 0;
        this.controller?.abort("expired");
        return;
      default:
    }
  }
}

/** Whether a delta event holds something to apply (a version over the thresholds may not). */
function hasDelta(data) {
  if (data.format && data.format !== "batch") return Array.isArray(data[data.format]);
  if ("delta" in data) return true;
  return "sectionDelta" in data && "itemDelta" in data;
}

/** Thrown where a delta does not fit the collection it is applied to. */
export class DeltaMismatch extends Error {
  constructor(message) {
    super(message);
    this.name = "DeltaMismatch";
  }
}

function fail(message) {
  throw new DeltaMismatch(message);
}

/** Deep JSON equality (objects by their members, in any order). */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((value, index) => jsonEqual(value, b[index]));
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}

/** An item's id: itself for a scalar, the member `idKey` names (dots for a nested one) otherwise. */
export function itemId(item, idKey = "id") {
  if (item === null || typeof item !== "object") return item;
  let value = item;
  for (const part of idKey.split(".")) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) return undefined;
    value = value[part];
  }
  return value;
}

/**
 * Each item's key as the keyed format names it: its id, or where ids repeat `{id, occurrence}`
 * (the n-th item with that id, counted from the start), as a string for lookups.
 */
export function itemKeys(items, { idKey = "id", unique = true } = {}, seen = new Map()) {
  return items.map((item) => {
    const id = itemId(item, idKey);
    if (unique) return keyOf(id);
    const text = JSON.stringify(id);
    const occurrence = (seen.get(text) ?? 0) + 1;
    seen.set(text, occurrence);
    return keyOf({ id, occurrence });
  });
}

/** A key of the keyed format (an id, or `{id, occurrence}`) as a string. */
export function keyOf(key) {
  if (key !== null && typeof key === "object") return `${JSON.stringify(key.id)}#${key.occurrence}`;
  return JSON.stringify(key);
}

const DEFAULT_OPTIONS = { idKey: "id", sectionIdKey: "id", itemsKey: "items", unique: true, format: "batch" };

/**
 * A session's collection as plain data, kept equal to it event by event: `items` (flat) or
 * `sections`, `version` and the session's `options`. `apply` takes a delta event in any
 * format (batch, sequential, jsonPatch, keyed; `changes: "fields"` and nested lists too) and
 * throws a `DeltaMismatch`, leaving the collection as it was, where the delta does not start at
 * this version or does not fit; `batch` and `sequential`, which carry the new collection, are
 * replayed and checked against it.
 */
export class LiveArray {
  constructor(data) {
    this.version = null;
    this.items = null;
    this.sections = null;
    this.options = { ...DEFAULT_OPTIONS };
    if (data) this.reset(data);
  }

  get sectioned() {
    return this.sections !== null;
  }

  /** Starts again from a whole session (a `reset` event, or GET's answer). */
  reset(data) {
    this.options = { ...DEFAULT_OPTIONS, ...(data.options ?? {}) };
    this.version = data.version ?? null;
    this.items = data.sections ? null : [...(data.items ?? [])];
    this.sections = data.sections ? data.sections.map((section) => ({ ...section })) : null;
    return this;
  }

  /** Applies one delta event (its `baseVersion` must be this version). */
  apply(data) {
    if (this.version !== null && data.baseVersion !== undefined && data.baseVersion !== this.version) {
      fail(`the delta starts at version ${data.baseVersion}, the list is at ${this.version}`);
    }
    const format = data.format ?? "batch";
    if (!hasDelta(data)) fail(`version ${data.version} has no delta to apply`);
    const result = this.sectioned ? this.#sectioned(format, data) : this.#flat(format, data);
    if (this.sectioned) this.sections = result;
    else this.items = result;
    this.version = data.version ?? this.version;
    return this;
  }

  #flat(format, data) {
    const old = this.items;
    switch (format) {
      case "batch": return checked(batchReplay(old, data.delta, needs(data.items, "items")), data.items);
      case "sequential": return checked(sequentialReplay(old, data.sequential, needs(data.items, "items")), data.items);
      case "jsonPatch": return applyPatch(old, data.jsonPatch);
      case "keyed": return keyedReplay(old, data.keyed, this.options);
      default: return fail(`unknown format ${format}`);
    }
  }

  #sectioned(format, data) {
    const old = this.sections;
    const itemsKey = this.options.itemsKey;
    switch (format) {
      case "batch": {
        const sections = needs(data.sections, "sections");
        return checked(sectionedBatchReplay(old, data.sectionDelta, data.itemDelta, sections, itemsKey), sections);
      }
      case "sequential": {
        const sections = needs(data.sections, "sections");
        return checked(sectionedSequentialReplay(old, data.sequential, sections, itemsKey), sections);
      }
      case "jsonPatch": {
        const document = applyPatch({ sections: old }, data.jsonPatch);
        if (!Array.isArray(document?.sections)) fail("the patch did not leave a list of sections");
        return document.sections;
      }
      case "keyed": return sectionedKeyedReplay(old, data.keyed, this.options);
      default: return fail(`unknown format ${format}`);
    }
  }
}

function needs(value, name) {
  if (!Array.isArray(value)) fail(`the event carries no ${name} (batch and sequential events carry the new collection)`);
  return value;
}

/** The replay where it equals the collection the event carried; else a mismatch. */
function checked(replayed, carried) {
  if (!jsonEqual(replayed, carried)) fail("replaying the delta does not give the collection the event carries");
  return replayed;
}

function index(value, length, what) {
  if (!Number.isInteger(value) || value < 0 || value >= length) fail(`${what} ${JSON.stringify(value)} is outside 0..${length - 1}`);
  return value;
}

/**
 * UIKit's batch reading: deletions at old positions; insertions and move targets at new ones;
 * the other survivors, in order, in the places left; reloads after, at their targets.
 */
export function batchReplay(old, delta, next) {
  if (!delta) fail("no delta");
  const result = new Array(next.length);
  const filled = new Array(next.length).fill(false);
  const gone = new Set();
  for (const position of delta.deletions ?? []) gone.add(index(position, old.length, "deletion"));
  for (const position of delta.insertions ?? []) {
    result[index(position, next.length, "insertion")] = next[position];
    filled[position] = true;
  }
  for (const move of delta.moves ?? []) {
    index(move.source, old.length, "move source");
    if (gone.has(move.source)) fail(`item ${move.source} is both deleted and moved`);
    gone.add(move.source);
    if (filled[index(move.target, next.length, "move target")]) fail(`position ${move.target} is filled twice`);
    result[move.target] = old[move.source];
    filled[move.target] = true;
  }
  let stayer = 0;
  for (let position = 0; position < next.length; position++) {
    if (filled[position]) continue;
    while (stayer < old.length && gone.has(stayer)) stayer++;
    if (stayer >= old.length) fail("the delta leaves positions without an item");
    result[position] = old[stayer++];
  }
  while (stayer < old.length && gone.has(stayer)) stayer++;
  if (stayer < old.length) fail("the delta leaves items without a position");
  for (const reload of delta.reloads ?? []) result[index(reload.target, next.length, "reload target")] = next[reload.target];
  return result;
}

/** ListUpdateCallback's reading: each operation on the list as the ones before left it. */
export function sequentialReplay(old, operations, next) {
  const rows = [...old];
  for (const op of operations) {
    switch (op.op) {
      case "remove":
        if (op.position < 0 || op.position + op.count > rows.length) fail(`remove ${op.position}+${op.count} of ${rows.length}`);
        rows.splice(op.position, op.count);
        break;
      case "move": {
        index(op.from, rows.length, "move from");
        const [row] = rows.splice(op.from, 1);
        if (op.to < 0 || op.to > rows.length) fail(`move to ${op.to} of ${rows.length + 1}`);
        rows.splice(op.to, 0, row);
        break;
      }
      case "insert":
        if (op.position < 0 || op.position > rows.length || op.position + op.count > next.length) fail(`insert at ${op.position}`);
        rows.splice(op.position, 0, ...next.slice(op.position, op.position + op.count));
        break;
      case "change":
        for (let row = op.position; row < op.position + op.count; row++) rows[index(row, Math.min(rows.length, next.length), "change")] = next[row];
        break;
      default:
        fail(`unknown operation ${op.op}`);
    }
  }
  return rows;
}

function withoutItems(section, itemsKey) {
  const { [itemsKey]: _, ...fields } = section;
  return fields;
}

/** The two stages of a sectioned batch: sections first (surviving ones keep their old rows), then rows by path. */
export function sectionedBatchReplay(old, sectionDelta, itemDelta, next, itemsKey = "items") {
  if (!sectionDelta || !itemDelta) fail("no delta");
  // Stage one: the sections in their new places; a kept section keeps its old rows and gets its
  // new header; an inserted one comes with its new rows.
  const placed = batchReplay(old.map((section, i) => ({ old: i })), { ...sectionDelta, reloads: [] }, next.map((_, i) => ({ fresh: i })));
  const stage = placed.map((entry, i) => ({
    ...withoutItems(next[i], itemsKey),
    [itemsKey]: entry.old === undefined ? next[i][itemsKey] : old[entry.old][itemsKey],
  }));
  // Stage two: rows, by {section, item}.
  const gone = stage.map(() => new Set());
  const result = next.map((section) => new Array(section[itemsKey].length));
  const filled = next.map((section) => new Array(section[itemsKey].length).fill(false));
  const at = (path, lists, what) => {
    index(path?.section, lists.length, `${what} section`);
    index(path.item, lists[path.section].length, `${what} item`);
    return path;
  };
  const rowsOf = stage.map((section) => section[itemsKey]);
  const newRows = next.map((section) => section[itemsKey]);
  for (const path of itemDelta.deletions ?? []) gone[at(path, rowsOf, "deletion").section].add(path.item);
  for (const path of itemDelta.insertions ?? []) {
    at(path, newRows, "insertion");
    result[path.section][path.item] = newRows[path.section][path.item];
    filled[path.section][path.item] = true;
  }
  for (const move of itemDelta.moves ?? []) {
    const source = at(move.source, rowsOf, "move source");
    const target = at(move.target, newRows, "move target");
    if (gone[source.section].has(source.item)) fail("an item is both deleted and moved");
    gone[source.section].add(source.item);
    result[target.section][target.item] = rowsOf[source.section][source.item];
    filled[target.section][target.item] = true;
  }
  for (let s = 0; s < next.length; s++) {
    let stayer = 0;
    for (let position = 0; position < result[s].length; position++) {
      if (filled[s][position]) continue;
      while (stayer < rowsOf[s].length && gone[s].has(stayer)) stayer++;
      if (stayer >= rowsOf[s].length) fail(`section ${s} has positions without an item`);
      result[s][position] = rowsOf[s][stayer++];
    }
  }
  for (const reload of itemDelta.reloads ?? []) {
    const target = at(reload.target, newRows, "reload target");
    result[target.section][target.item] = newRows[target.section][target.item];
  }
  return stage.map((section, s) => ({ ...section, [itemsKey]: result[s] }));
}

/** The sectioned sequential reading: section operations, row operations by section, headers. */
export function sectionedSequentialReplay(old, operations, next, itemsKey = "items") {
  const sections = old.map((section) => ({ ...section }));
  const rows = (s) => {
    index(s, sections.length, "section");
    return [...sections[s][itemsKey]];
  };
  for (const op of operations) {
    switch (op.op) {
      case "removeSections":
        if (op.position < 0 || op.position + op.count > sections.length) fail("removeSections outside the list");
        sections.splice(op.position, op.count);
        break;
      case "moveSection": {
        const [section] = sections.splice(index(op.from, sections.length, "moveSection from"), 1);
        sections.splice(op.to, 0, section);
        break;
      }
      case "insertSections":
        if (op.position < 0 || op.position > sections.length) fail("insertSections outside the list");
        sections.splice(op.position, 0, ...next.slice(op.position, op.position + op.count).map((s) => ({ ...s })));
        break;
      case "changeSections":
        for (let s = op.position; s < op.position + op.count; s++) {
          index(s, Math.min(sections.length, next.length), "changeSections");
          sections[s] = { ...withoutItems(next[s], itemsKey), [itemsKey]: sections[s][itemsKey] };
        }
        break;
      case "remove": case "insert": case "change": {
        const list = rows(op.section);
        const source = next[index(op.section, next.length, "section")][itemsKey];
        if (op.op === "remove") {
          if (op.position < 0 || op.position + op.count > list.length) fail("remove outside the section");
          list.splice(op.position, op.count);
        } else if (op.op === "insert") {
          if (op.position < 0 || op.position > list.length) fail("insert outside the section");
          list.splice(op.position, 0, ...source.slice(op.position, op.position + op.count));
        } else {
          for (let r = op.position; r < op.position + op.count; r++) list[index(r, Math.min(list.length, source.length), "change")] = source[r];
        }
        sections[op.section] = { ...sections[op.section], [itemsKey]: list };
        break;
      }
      case "move": {
        const from = rows(op.from.section);
        const [row] = from.splice(index(op.from.item, from.length, "move from"), 1);
        sections[op.from.section] = { ...sections[op.from.section], [itemsKey]: from };
        const to = rows(op.to.section);
        if (op.to.item < 0 || op.to.item > to.length) fail("move to outside the section");
        to.splice(op.to.item, 0, row);
        sections[op.to.section] = { ...sections[op.to.section], [itemsKey]: to };
        break;
      }
      default:
        fail(`unknown operation ${op.op}`);
    }
  }
  return sections;
}

/** An item after a keyed `update`: the new item, or its fields set and removed, nested lists changed. */
function updated(item, op, options) {
  if (Object.hasOwn(op, "item")) return op.item;
  if (!op.changes || item === null || typeof item !== "object") fail(`update of ${JSON.stringify(op.id)} has neither item nor changes`);
  const result = { ...item };
  for (const name of op.changes.removed ?? []) delete result[name];
  Object.assign(result, op.changes.set ?? {});
  for (const [field, answer] of Object.entries(op.nested ?? {})) {
    if (!Array.isArray(item[field])) fail(`nested ${field} is not a list`);
    const inner = { ...DEFAULT_OPTIONS, ...(options.nested?.[field] ?? {}) };
    result[field] = keyedReplay(item[field], answer.keyed ?? fail(`nested ${field} is not keyed`), inner);
  }
  return result;
}

/** The keyed reading of a flat list: by key, remove, move before, insert before, update. */
export function keyedReplay(old, operations, options = {}) {
  const opts = { ...DEFAULT_OPTIONS, ...options };
  const keys = itemKeys(old, opts);
  const rows = old.map((item, i) => ({ key: keys[i], item }));
  const find = (key) => {
    const found = rows.findIndex((row) => row.key === key);
    if (found < 0) fail(`no item ${key}`);
    return found;
  };
  const place = (row, before) => {
    if (before === null || before === undefined) rows.push(row);
    else rows.splice(find(keyOf(before)), 0, row);
  };
  for (const op of operations) {
    const key = keyOf(op.id);
    switch (op.op) {
      case "remove": rows.splice(find(key), 1); break;
      case "move": place(rows.splice(find(key), 1)[0], op.before); break;
      case "insert":
        if (opts.unique && rows.some((row) => row.key === key)) fail(`item ${key} is already there`);
        place({ key, item: op.item }, op.before);
        break;
      case "update": {
        const at = find(key);
        rows[at] = { key, item: updated(rows[at].item, op, opts) };
        break;
      }
      default: fail(`unknown operation ${op.op}`);
    }
  }
  return rows.map((row) => row.item);
}

/** The keyed reading of sections: sections by their id, items by key across sections. */
export function sectionedKeyedReplay(old, operations, options = {}) {
  const opts = { ...DEFAULT_OPTIONS, ...options };
  const { itemsKey, sectionIdKey } = opts;
  const seen = new Map();
  const sections = old.map((section) => {
    const items = section[itemsKey] ?? [];
    const keys = itemKeys(items, opts, seen);
    return { key: keyOf(itemId(section, sectionIdKey)), fields: withoutItems(section, itemsKey), rows: items.map((item, i) => ({ key: keys[i], item })) };
  });
  const sectionAt = (key) => {
    const found = sections.findIndex((section) => section.key === key);
    if (found < 0) fail(`no section ${key}`);
    return found;
  };
  const itemAt = (key) => {
    for (const section of sections) {
      const found = section.rows.findIndex((row) => row.key === key);
      if (found >= 0) return [section, found];
    }
    return fail(`no item ${key}`);
  };
  const placeIn = (list, element, before, find) => {
    if (before === null || before === undefined) list.push(element);
    else list.splice(find(keyOf(before)), 0, element);
  };
  for (const op of operations) {
    const key = keyOf(op.id);
    switch (op.op) {
      case "removeSection": sections.splice(sectionAt(key), 1); break;
      case "moveSection": placeIn(sections, sections.splice(sectionAt(key), 1)[0], op.before, sectionAt); break;
      case "insertSection": {
        const value = op.section;
        const items = value?.[itemsKey] ?? [];
        const keys = op.keys ? op.keys.map(keyOf) : items.map((item) => keyOf(itemId(item, opts.idKey)));
        const element = { key, fields: withoutItems(value, itemsKey), rows: items.map((item, i) => ({ key: keys[i], item })) };
        placeIn(sections, element, op.before, sectionAt);
        break;
      }
      case "updateSection": sections[sectionAt(key)].fields = withoutItems(op.section, itemsKey); break;
      case "remove": {
        const [section, at] = itemAt(key);
        section.rows.splice(at, 1);
        break;
      }
      case "move": case "insert": {
        let row;
        if (op.op === "move") {
          const [section, at] = itemAt(key);
          row = section.rows.splice(at, 1)[0];
        } else {
          row = { key, item: op.item };
        }
        const target = sections[sectionAt(keyOf(op.section))];
        placeIn(target.rows, row, op.before, (k) => {
          const found = target.rows.findIndex((r) => r.key === k);
          if (found < 0) fail(`no item ${k} in section ${target.key}`);
          return found;
        });
        break;
      }
      case "update": {
        const [section, at] = itemAt(key);
        section.rows[at] = { key, item: updated(section.rows[at].item, op, opts) };
        break;
      }
      default: fail(`unknown operation ${op.op}`);
    }
  }
  return sections.map((section) => ({ ...section.fields, [itemsKey]: section.rows.map((row) => row.item) }));
}

/** RFC 6901: a pointer's reference tokens. */
function tokens(pointer) {
  if (pointer === "") return [];
  if (typeof pointer !== "string" || !pointer.startsWith("/")) fail(`${JSON.stringify(pointer)} is not a JSON Pointer`);
  return pointer.slice(1).split("/").map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/**
 * RFC 6902 applied without changing `document`: containers on the paths the patch writes are
 * copied (once each), everything else is shared, so an item the patch does not touch stays the
 * same object.
 */
export function applyPatch(document, patch) {
  if (!Array.isArray(patch)) fail("a patch is an array of operations");
  const copies = new WeakSet();
  const own = (value) => {
    if (value === null || typeof value !== "object" || copies.has(value)) return value;
    const copy = Array.isArray(value) ? [...value] : { ...value };
    copies.add(copy);
    return copy;
  };
  let root = own(document);
  // The container a path's last token is in, made writable along the way.
  const parent = (path) => {
    const parts = tokens(path);
    if (parts.length === 0) return [null, null];
    let node = root;
    for (const part of parts.slice(0, -1)) {
      const key = Array.isArray(node) ? arrayIndex(node, part, false) : part;
      if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) fail(`${path} leads nowhere`);
      node[key] = own(node[key]);
      node = node[key];
    }
    if (node === null || typeof node !== "object") fail(`${path} leads nowhere`);
    return [node, parts.at(-1)];
  };
  const get = (path) => {
    let node = root;
    for (const part of tokens(path)) {
      const key = Array.isArray(node) ? arrayIndex(node, part, false) : part;
      if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) fail(`${path} leads nowhere`);
      node = node[key];
    }
    return node;
  };
  const remove = (path) => {
    const [node, last] = parent(path);
    if (node === null) fail("the root cannot be removed");
    if (Array.isArray(node)) return node.splice(arrayIndex(node, last, false), 1)[0];
    if (!Object.hasOwn(node, last)) fail(`${path} leads nowhere`);
    const value = node[last];
    delete node[last];
    return value;
  };
  const add = (path, value) => {
    const [node, last] = parent(path);
    if (node === null) return void (root = value);
    if (Array.isArray(node)) node.splice(last === "-" ? node.length : arrayIndex(node, last, true), 0, value);
    else node[last] = value;
  };
  for (const op of patch) {
    switch (op.op) {
      case "add": add(op.path, op.value); break;
      case "remove": remove(op.path); break;
      case "replace": {
        const [node, last] = parent(op.path);
        if (node === null) root = op.value;
        else if (Array.isArray(node)) node[arrayIndex(node, last, false)] = op.value;
        else if (!Object.hasOwn(node, last)) fail(`${op.path} leads nowhere`);
        else node[last] = op.value;
        break;
      }
      case "move": {
        if (op.path.startsWith(`${op.from}/`)) fail("a value cannot move into itself");
        add(op.path, remove(op.from));
        break;
      }
      case "copy": add(op.path, structuredClone(get(op.from))); break;
      case "test": if (!jsonEqual(get(op.path), op.value)) fail(`test of ${op.path} failed`); break;
      default: fail(`unknown operation ${op.op}`);
    }
  }
  return root;
}

function arrayIndex(array, token, forAdd) {
  if (!/^(0|[1-9]\d*)$/.test(token)) fail(`${token} is not an array index`);
  const value = Number(token);
  if (value > array.length || (!forAdd && value === array.length)) fail(`index ${value} is outside an array of ${array.length}`);
  return value;
}
