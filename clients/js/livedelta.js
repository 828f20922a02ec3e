// LiveDelta's JavaScript client: every call of the API, and a follower of a session's live
// events; with the appliers (./appliers.js, re-exported here) that keep a plain array (or a list
// of sections) equal to the session, version by version. ES modules with no dependencies and no
// build step; they run in current browsers and in Node 20. The DOM list is in ./dom.js. Types:
// ./livedelta.d.ts.
import { DeltaMismatch, LiveArray, hasDelta } from "./appliers.js";

export {
  DeltaMismatch, LiveArray, applyPatch, batchReplay, itemId, itemKeys, jsonEqual, keyOf, keyedReplay, sectionedBatchReplay,
  sectionedKeyedReplay, sectionedSequentialReplay, sequentialReplay,
} from "./appliers.js";

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

/** The error an answer that is not a success says, from its text. */
function errorOf(response, text) {
  let body = null;
  try {
    body = JSON.parse(text);
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
  constructor(baseURL = "", { token, fetch: fetchFunction, credentials, headers = {}, retries = 2, timeout = 30000 } = {}) {
    this.baseURL = String(baseURL).replace(/\/+$/, "");
    this.tokenSource = typeof token === "function" ? token : token === undefined ? null : () => token;
    this.fetch = fetchFunction ?? ((...args) => globalThis.fetch(...args));
    this.credentials = credentials;
    this.headers = headers;
    this.retries = retries;
    this.timeout = timeout;
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
   * `Idempotency-Key` (one per call, the same on its retries), so the server answers a retry
   * whose first try got through with that first answer and commits nothing. Retried, after a
   * jittered back-off (with `Retry-After` as a floor), where the connection failed, no answer
   * came within `timeout`, the server refused before doing anything (408, 429, 503), or it
   * cannot tell whether a write took effect (504 `outcome_unknown`: retried only where the
   * call carries its key, so that the retry is answered by it); `repeatable: false` sends a
   * call once. Resolves with `{status, body, version, location,
   * headers}`; rejects with a `LiveDeltaError`.
   */
  async request(method, path, { body, contentType = JSON_TYPE, ifMatch, idempotencyKey, query, signal, repeatable } = {}) {
    const write = method !== "GET" && method !== "HEAD";
    const key = write ? (idempotencyKey ?? randomKey()) : undefined;
    // Safe to send again: reads change nothing, and the server answers a write's retry by its
    // key, with the first answer.
    const safeToRepeat = repeatable ?? true;
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
      let text;
      try {
        ({ response, text } = await this.#send(this.url(path + search), {
          method, headers, credentials: this.credentials,
          body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
        }, signal));
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
        const error = errorOf(response, text);
        error.idempotencyKey = key;
        const nothingDone = response.status === 408 || response.status === 429 || response.status === 503;
        const unknown = response.status === 504 && (key !== undefined || !write) && safeToRepeat;
        if ((nothingDone || unknown) && attempt < this.retries) {
          await delay(Math.max((error.retryAfter ?? 0) * 1000, backoff(attempt, 250, 4000)), signal);
          continue;
        }
        throw error;
      }
      return {
        status: response.status, body: text ? JSON.parse(text) : null, version: versionOf(response),
        location: response.headers.get("Location") ?? undefined, headers: response.headers,
      };
    }
  }

  /**
   * One try: the answer and its whole text, given up where they do not come within `timeout`
   * ms (a server that accepted the call and went quiet); throws what fetch throws.
   */
  async #send(url, init, signal) {
    const watchdog = new AbortController();
    const forward = () => watchdog.abort(signal.reason);
    signal?.addEventListener("abort", forward, { once: true });
    const timer = setTimeout(() => watchdog.abort("timeout"), this.timeout);
    try {
      const response = await this.fetch(url, { ...init, signal: watchdog.signal });
      const text = response.status === 204 ? "" : await response.text();
      return { response, text };
    } catch (cause) {
      if (watchdog.signal.reason === "timeout") throw new Error(`no answer in ${this.timeout} ms`, { cause });
      throw cause;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", forward);
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

  /**
   * `GET /sessions/{id}`: items or sections, version, counts, options; with `window` (see
   * `windowQuery`), that window's rows, where they are (`window`) and the `token` to follow it
   * from.
   */
  getSession(id, { window, ...call } = {}) {
    const query = new URLSearchParams(Object.entries(windowQuery(window)).map(([key, value]) => [key, String(value)]));
    const suffix = window ? `?${query}` : "";
    return this.#answer("GET", LiveDeltaClient.sessionPath(id) + suffix, call);
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
      onWindow: (data) => {
        array.moveWindow(data);
        onChange(array, { type: "window", version: array.version, data });
      },
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

/**
 * An event the app could not use: its data did not parse, or a callback (`onReset`, `onDelta`,
 * `onWindow`, `onChange`) threw on it. The server would send the same bytes again, so it is never
 * asked for again: following stops with this error (or, with `unusable: "readAfresh"`, reads
 * the session whole once).
 */
export class UnusableEvent extends LiveDeltaError {
  constructor({ session, event, version = null, eventId = null, cause }) {
    const at = version === null ? "" : ` at version ${version}`;
    super({ code: "unusable_event", message: `session ${session}: the ${event}${at} could not be used (${cause?.message ?? cause})`, cause });
    this.name = "UnusableEvent";
    this.session = session;
    this.event = event;
    this.version = version;
    this.eventId = eventId;
  }

  /** Never: the server would send the same event again. */
  get transient() {
    return false;
  }
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
  // A window's token also says which rows it holds: `<life>.<version>~<first>-<rows>`.
  const match = typeof id === "string" && /^([0-9a-z]+)\.(\d+)(?:~\d+-\d+)?$/.exec(id);
  return match ? { life: match[1], version: Number(match[2]) } : null;
}

/**
 * The query parameters of a window: `{limit}` with at most one of `offset`, `after` and
 * `before` (an item's id), and `overscan`. Ids go as JSON, so that `"7"` and `7` stay apart.
 */
export function windowQuery(window) {
  if (!window) return {};
  const { offset, after, before, limit, overscan } = window;
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError("a window needs a limit: a whole number of rows from 1");
  const placed = [offset, after, before].filter((value) => value !== undefined);
  if (placed.length > 1) throw new TypeError("offset, after and before each place a window: give one of them");
  const query = { limit };
  if (offset !== undefined) query.offset = offset;
  if (after !== undefined) query.after = JSON.stringify(after);
  if (before !== undefined) query.before = JSON.stringify(before);
  if (overscan !== undefined) query.overscan = overscan;
  return query;
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
 * was deleted, expired or evicted), `onStop(error)` (a permanent error: nothing more will come;
 * an `UnusableEvent` where an event did not parse or a callback threw on it, which is never asked
 * for again: with `unusable: "readAfresh"` the session is read whole once instead),
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
    // Resuming from a token: the app shows its version, and deltas chain from it.
    this.version = position(this.lastId)?.version ?? null;
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

  /**
   * Follows another window (the user scrolled): the follower reconnects at once with its
   * token and the new window, and the server sends one delta from the rows it holds to the
   * new window's, not a reset.
   */
  moveWindow(window) {
    windowQuery(window);
    this.options.window = window;
    this.moving = true;
    this.controller?.abort("move");
    this.wake?.();
  }

  async #fresh(reason) {
    const data = await this.client.getSession(this.id, { window: this.options.window });
    this.version = data.version;
    if (data.token) {
      this.lastId = data.token;
      this.life = position(data.token)?.life ?? this.life;
    }
    try {
      this.options.onReset?.(data, { first: false, reason });
    } catch (cause) {
      // A read the app cannot use either: stopped (or passed by) as an event would be.
      this.#unusable("read", data.token ?? null, JSON.stringify({ version: data.version }), cause);
    }
  }

  async #run() {
    while (!this.stopped) {
      if (this.options.pauseWhenHidden && globalThis.document?.visibilityState === "hidden") {
        this.#state("paused");
        await new Promise((resolve) => (this.wake = resolve));
        continue;
      }
      this.controller = new AbortController();
      this.passing = false;
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
      if (this.moving) {
        this.moving = false;
        continue;
      }
      if (this.stopped || this.pendingReread || ["hidden", "unusable"].includes(this.controller.signal.reason)) continue;
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
    const { format, changes, catchUp, rows, window } = this.options;
    const query = { format, changes, catchUp, rows, ...windowQuery(window), ...extra };
    if (this.lastId) query.since = this.lastId;
    return `?${new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined))}`;
  }

  /** Opens a connection, asking for a new token once after a 401; throws a LiveDeltaError. */
  async #open(path, signal, accept, patience) {
    let refreshed = false;
    for (;;) {
      const headers = { Accept: accept, ...this.client.headers };
      const token = await this.client.token(this.refreshToken === true);
      this.refreshToken = false;
      if (token) headers.Authorization = `Bearer ${token}`;
      this.#state("connecting");
      let response;
      // A connection that never answers (a server stopping, a dead link) is given up.
      const timer = setTimeout(() => this.controller.abort("silent"), patience);
      try {
        response = await this.client.fetch(this.client.url(path), { headers, signal, credentials: this.client.credentials, cache: "no-store" });
      } catch (cause) {
        const reason = signal.reason === "silent" ? `no answer in ${patience} ms` : cause?.message ?? cause;
        throw new LiveDeltaError({ message: `the connection failed (${reason})`, cause });
      } finally {
        clearTimeout(timer);
      }
      if (response.status === 401 && this.client.tokenSource && !refreshed) {
        refreshed = true;
        await this.client.token(true);
        continue;
      }
      if (!response.ok) {
        const error = errorOf(response, await response.text().catch(() => ""));
        if (response.status === 401) error.message = `the token was refused: ${error.message}`;
        throw error;
      }
      return response;
    }
  }

  async #stream(signal) {
    const path = LiveDeltaClient.sessionPath(this.id, "/events") + this.#query();
    const response = await this.#open(path, signal, "text/event-stream", this.options.heartbeatTimeout);
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
    // Ending the stream ourselves (a shutdown event, a fresh read, the watchdog, close) cancels
    // the reader as well as the fetch: Node 20's fetch can leave a pending read unsettled when
    // the fetch is aborted after the server has closed the connection.
    const cancel = () => reader.cancel(signal.reason).catch(() => {});
    signal.addEventListener("abort", cancel, { once: true });
    this.#state("live");
    watch();
    let broke;
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
      broke = cause;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", cancel);
    }
    if (this.stopped || this.ended) return;
    if (signal.reason === "silent") {
      // Nothing, not even a heartbeat: a proxy that holds streams back, or a dead link. After
      // two such streams in a row, long polling (in auto mode).
      if (!heard && ++this.silentStreams >= 2 && this.options.transport === "auto") this.transport = "poll";
      throw new LiveDeltaError({ message: `no heartbeat for ${this.options.heartbeatTimeout} ms`, cause: broke });
    }
    if (signal.aborted) return;
    throw new LiveDeltaError({ message: broke ? `the stream broke (${broke?.message ?? broke})` : "the stream ended", cause: broke });
  }

  async #poll(signal) {
    for (;;) {
      const path = LiveDeltaClient.sessionPath(this.id, "/changes") + this.#query({ wait: this.options.pollWait });
      // A poll answers within its wait; past that and a heartbeat's grace it is given up.
      const patience = this.options.pollWait * 1000 + this.options.heartbeatTimeout;
      const response = await this.#open(path, signal, JSON_TYPE, patience);
      const timer = setTimeout(() => this.controller.abort("silent"), patience);
      let page;
      try {
        page = await response.json();
      } catch (cause) {
        throw new LiveDeltaError({ message: `the long poll broke (${cause?.message ?? cause})`, cause });
      } finally {
        clearTimeout(timer);
      }
      this.#state("live");
      for (const event of page.events) {
        this.#event(event.event, event.id, JSON.stringify(event.data), event.data);
        if (this.stopped || this.ended || this.pendingReread || this.passing) return;
      }
      if (page.next === null || page.next === undefined) return;
      this.lastId = page.next;
      if (this.shutdownDelay !== undefined) return;
    }
  }

  #event(type, id, text, parsed) {
    // The rest of a chunk after an event passed by: the connection is being replaced.
    if (this.passing || this.stopped) return;
    try {
      this.#take(type, id, text, parsed);
    } catch (cause) {
      this.#unusable(type, id, text, cause);
    }
  }

  /**
   * An event that did not parse, or that a callback threw on: never retried (the server would
   * send it again, for ever). Following stops, or, with `unusable: "readAfresh"`, reconnects
   * without a resume token for the session whole; a second one before a reset is used stops.
   */
  #unusable(type, id, text, cause) {
    let version = position(id)?.version ?? null;
    try {
      version = JSON.parse(text).version ?? version;
    } catch {
      // The version the id names, then.
    }
    const error = new UnusableEvent({ session: this.id, event: type, version, eventId: id ?? null, cause });
    if (this.options.unusable === "readAfresh" && !this.skipping) {
      this.skipping = true;
      this.passing = true;
      this.lastId = null;
      this.resetReason = error.message;
      this.controller?.abort("unusable");
      return;
    }
    this.#stop(error);
  }

  #take(type, id, text, parsed) {
    const data = parsed ?? (text ? JSON.parse(text) : {});
    this.failures = 0;
    switch (type) {
      case "reset": {
        const first = this.version === null;
        const life = position(id)?.life;
        // Another life: the session was replaced (or began again) since.
        const reason = this.resetReason ?? (first ? "start" : life && this.life && life !== this.life ? "replaced" : "reset");
        this.lastId = id ?? this.lastId;
        this.life = life ?? this.life;
        this.version = data.version;
        this.options.onReset?.(data, { first, reason });
        this.resetReason = null;
        this.skipping = false;
        return;
      }
      case "delta": {
        const at = position(id);
        // (A window's scroll at the same version starts from that version: it is not shown yet.)
        if (this.version !== null && at && at.life === this.life && data.version <= this.version && data.baseVersion !== this.version) {
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
      case "window": {
        // A window's rows did not change; where they are, or the session's total, did.
        if (this.version === null || data.baseVersion !== this.version) {
          this.lastId = id ?? this.lastId;
          return this.reread(`a window event from version ${data.baseVersion} arrived at version ${this.version}`);
        }
        this.lastId = id ?? this.lastId;
        this.version = data.version;
        this.options.onWindow?.(data);
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

