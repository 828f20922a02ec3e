// Types of livedelta.js. A test checks that every export of the module is declared here, and
// `tsc --strict` compiles a program using them (test/types.ts).

/** Any JSON value: an item, a section's field. */
export type JSONValue = null | boolean | number | string | JSONValue[] | { [member: string]: JSONValue };
/** An item of a collection. */
export type Item = JSONValue;
/** A section: its own fields, and its items under the session's `itemsKey` (`items`). */
export type Section = { [member: string]: JSONValue };
/** A collection: an array of items, or sections. */
export type Collection = Item[] | { sections: Section[] };

export type DeltaFormat = "batch" | "sequential" | "jsonPatch" | "keyed";
export type ChangeDetail = "rows" | "fields";

/** The options of /diff and of a session (see docs/deltas.md). */
export interface DiffOptions {
  idKey?: string;
  sectionIdKey?: string;
  itemsKey?: string;
  unique?: boolean;
  dataCountAnimationThreshold?: number;
  deltaCountAnimationThreshold?: number;
  includeDeletedItems?: boolean;
  format?: DeltaFormat;
  changes?: ChangeDetail;
  compareKeys?: string[];
  ignoreKeys?: string[];
  nested?: { [field: string]: DiffOptions };
}

/** A session's options as the server keeps them. */
export interface SessionOptions extends DiffOptions {
  idKey: string;
  sectionIdKey: string;
  itemsKey: string;
  unique: boolean;
}

export interface Move<Position> {
  source: Position;
  target: Position;
}
export interface Reload<Position> extends Move<Position> {
  changes?: FieldChanges;
  nested?: { [field: string]: DeltaAnswer };
}
export interface IndexDelta<Position = number> {
  deletions: Position[];
  insertions: Position[];
  moves: Move<Position>[];
  reloads: Reload<Position>[];
}
export interface ItemPath {
  section: number;
  item: number;
}
export interface FieldChanges {
  set: { [field: string]: JSONValue };
  removed: string[];
}

export type SequentialOperation =
  | { op: "remove" | "insert"; position: number; count: number; section?: number }
  | { op: "change"; position: number; count: number; section?: number; payload?: FieldChanges; nested?: { [field: string]: DeltaAnswer } }
  | { op: "move"; from: number; to: number }
  | { op: "move"; from: ItemPath; to: ItemPath }
  | { op: "removeSections" | "insertSections" | "changeSections"; position: number; count: number }
  | { op: "moveSection"; from: number; to: number };

export interface PatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  from?: string;
  value?: JSONValue;
}

/** An id in the keyed format: the item's id, or where ids repeat `{id, occurrence}`. */
export type Key = JSONValue | { id: JSONValue; occurrence: number };

export type KeyedOperation =
  | { op: "remove"; id: Key }
  | { op: "move"; id: Key; before: Key | null; section?: JSONValue }
  | { op: "insert"; id: Key; before: Key | null; item: Item; section?: JSONValue }
  | { op: "update"; id: Key; item?: Item; changes?: FieldChanges; nested?: { [field: string]: DeltaAnswer } }
  | { op: "removeSection"; id: JSONValue }
  | { op: "moveSection"; id: JSONValue; before: JSONValue | null }
  | { op: "insertSection"; id: JSONValue; before: JSONValue | null; section: Section; keys?: Key[] }
  | { op: "updateSection"; id: JSONValue; section: Section };

/** What /diff, an update or a delta event answers: the delta in the format asked for, and counts. */
export interface DeltaAnswer {
  animation?: string;
  sectionAnimation?: string;
  itemAnimation?: string;
  format?: DeltaFormat;
  delta?: IndexDelta;
  sectionDelta?: IndexDelta;
  itemDelta?: IndexDelta<ItemPath>;
  sequential?: SequentialOperation[];
  jsonPatch?: PatchOperation[];
  keyed?: KeyedOperation[];
  changeCount?: number;
  oldCount?: number;
  newCount?: number;
  deletedItems?: Item[];
  [member: string]: unknown;
}

/** A session's answer to a write: the delta, and the versions. */
export interface SessionAnswer extends DeltaAnswer {
  id: string;
  version: number;
  baseVersion?: number;
  count?: number;
  sectionCount?: number;
}

/** Where a window's rows are: its first row's position, its rows, the session's rows, and a keyset window's anchor (null at an edge). */
export interface WindowPlace {
  offset: number;
  count: number;
  total: number;
  after?: JSONValue | null;
  before?: JSONValue | null;
}

/** The rows of a flat session to read or follow: `limit` rows from `offset`, or after or before an item (by id), with `overscan` rows more each side; of a sectioned session, whole sections, `after` and `before` naming sections. */
export interface Window {
  limit: number;
  offset?: number;
  after?: JSONValue;
  before?: JSONValue;
  overscan?: number;
}

/** A session whole, as GET and a `reset` event give it (a window's rows, for a window). */
export interface SessionState {
  id: string;
  version: number;
  count: number;
  sectionCount?: number;
  options: SessionOptions;
  items?: Item[];
  sections?: Section[];
  /** For a window: where its rows are. */
  window?: WindowPlace;
  /** For a window read: the token to follow it from without a reset. */
  token?: string;
}

/** A window event: its rows are unchanged at `version`; where they are or the total changed. */
export interface WindowEvent {
  id: string;
  version: number;
  baseVersion: number;
  window: WindowPlace;
}

/** A delta event: the answer the update to `version` gave, in the follower's format. */
export interface DeltaEvent extends DeltaAnswer {
  id: string;
  version: number;
  baseVersion: number;
  items?: Item[];
  sections?: Section[];
  /** With `rows: "changed"`: the rows the delta inserts or changes, in the order it meets them. */
  rows?: Item[];
  /** For a window: where its rows are after the delta. */
  window?: WindowPlace;
}

export type TokenSource = string | ((context: { refresh: boolean }) => string | null | undefined | Promise<string | null | undefined>);

export interface ClientOptions {
  /** A bearer token, or a function asked for one (again with `refresh: true` after a 401). */
  token?: TokenSource;
  /** The fetch to use (the global one by default). */
  fetch?: typeof fetch;
  /** fetch's `credentials`: `"include"` sends cookies to another origin (see docs/access.md). */
  credentials?: RequestCredentials;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
  /** Tries again after 429, 503 and failed connections, writes with the same key (2). */
  retries?: number;
  /** Milliseconds a call may take, answer included, before it is given up as lost (30000). */
  timeout?: number;
}

export interface CallOptions {
  /** `If-Match`: a version, or entity tags as RFC 9110 lists them (`"3", "4"`, `*`). */
  ifMatch?: number | string;
  /** The write's Idempotency-Key (a new random one for each call by default). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface RequestOptions extends CallOptions {
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | number | undefined>;
  /** Whether a call whose connection failed may be sent again (true: writes carry their key). */
  repeatable?: boolean;
}

export interface Answer<Body> {
  status: number;
  body: Body;
  /** The version the `ETag` names. */
  version?: number;
  location?: string;
  headers: Headers;
}

/** An answer that is not a success. */
export class LiveDeltaError extends Error {
  constructor(details?: {
    status?: number;
    code?: string;
    message?: string;
    pointer?: string;
    limit?: string;
    retryAfter?: number;
    cause?: unknown;
  });
  /** The HTTP status; 0 where the connection failed. */
  readonly status: number;
  /** The server's error code (`version_mismatch`, `session_not_found`, ...), or `network_error`. */
  readonly code: string;
  /** A JSON Pointer into the body sent, where the server gave one. */
  readonly pointer?: string;
  /** The flag a limit comes from, where one was reached. */
  readonly limit?: string;
  /** Seconds to wait before trying again (`Retry-After`). */
  readonly retryAfter?: number;
  /** A write's Idempotency-Key, to send again with the same write. */
  idempotencyKey?: string;
  /** Whether trying again later may succeed (0, 408, 429, 5xx). */
  readonly transient: boolean;
}

/**
 * An event the app could not use (its data did not parse, or a callback threw on it): following
 * stops with it (`onStop`: a `LiveDeltaError` with the code `unusable_event`, never transient) rather than ask for the same
 * bytes again, or reads afresh once (`unusable`).
 */
export class UnusableEvent extends LiveDeltaError {
  constructor(details: { session: string; event: string; version?: number | null; eventId?: string | null; cause?: unknown });
  /** The session followed. */
  readonly session: string;
  /** The event's type: `reset`, `delta`, `window`, ... */
  readonly event: string;
  /** The version it brings, where it could be read. */
  readonly version: number | null;
  /** Its id (a resume token). */
  readonly eventId: string | null;
}

/** A delta that does not fit the collection it was applied to. */
export class DeltaMismatch extends Error {
  constructor(message: string);
}

export type FollowState = "idle" | "connecting" | "live" | "reconnecting" | "paused" | "ended" | "stopped";

export interface FollowOptions {
  /** The format deltas come in (`keyed` by default). */
  format?: DeltaFormat;
  changes?: ChangeDetail;
  catchUp?: "replay" | "coalesce";
  /**
   * With `batch` or `sequential`: `changed` has each delta carry only the rows it inserts or
   * changes (`rows`), which the live array puts in place; `all` (the server's default) the new
   * list whole (`items`).
   */
  rows?: "all" | "changed";
  /** A resume token (an event id) kept from before. */
  since?: string;
  /** `auto` (streams, long polling where streams stay silent), `sse` or `poll`. */
  transport?: "auto" | "sse" | "poll";
  /** Milliseconds without a byte after which a stream is dropped and opened again (45000). */
  heartbeatTimeout?: number;
  /** The back-off's first and longest delay in milliseconds (1000, 32000). */
  minDelay?: number;
  maxDelay?: number;
  /** Seconds a long poll waits (20). */
  pollWait?: number;
  /** Let go of the connection while the page is hidden. */
  pauseWhenHidden?: boolean;
  /** Follow these rows alone (see `moveWindow` to scroll). */
  window?: Window;
  /** An event the app cannot use: stop (the default) or read the session whole once. */
  unusable?: "stop" | "readAfresh";
  onReset?: (data: SessionState, info: { first: boolean; reason: string }) => void;
  onDelta?: (data: DeltaEvent) => void;
  onWindow?: (data: WindowEvent) => void;
  onEnd?: (reason: "deleted" | "expired" | "evicted" | string) => void;
  onStop?: (error: LiveDeltaError) => void;
  onState?: (state: FollowState, detail: { version: number | null; delay?: number; error?: unknown; reason?: string }) => void;
}

export interface LiveOptions extends Omit<FollowOptions, "onReset" | "onDelta" | "onWindow"> {
  onChange?: (
    collection: LiveArray,
    event: { type: "reset" | "delta" | "window"; version: number | null; first?: boolean; reason?: string; data?: DeltaEvent | WindowEvent },
  ) => void;
}

/** Follows one session's events (see the module's documentation and docs/clients.md). */
export class Follower {
  constructor(client: LiveDeltaClient, id: string, options?: FollowOptions);
  readonly id: string;
  /** The version the app was given last; null before the first. */
  readonly version: number | null;
  /** The last event id, to resume from (`since`). */
  readonly lastId: string | null;
  readonly state: FollowState;
  /** Why it stopped, where an error stopped it. */
  readonly error?: LiveDeltaError;
  /** Settles when the follower stops (closed, ended, or a permanent error). */
  readonly done: Promise<void>;
  /** The collection, for a follower made by `LiveDeltaClient.live`. */
  array?: LiveArray;
  /** Reads the session afresh and gives it as a reset. */
  reread(reason: string): void;
  /** Follows another window: one delta from the rows held to the new window's, not a reset. */
  moveWindow(window: Window): void;
  close(): void;
}

/** A follower made by `live`, with the collection it keeps. */
export interface LiveFollower extends Follower {
  array: LiveArray;
}

export class LiveDeltaClient {
  constructor(baseURL?: string, options?: ClientOptions);
  readonly baseURL: string;
  static sessionPath(id: string, route?: string): string;
  url(path: string): string;
  token(refresh?: boolean): Promise<string | null>;
  request<Body = unknown>(method: string, path: string, options?: RequestOptions): Promise<Answer<Body>>;
  diff(old: Collection, next: Collection, options?: DiffOptions, call?: { signal?: AbortSignal }): Promise<DeltaAnswer>;
  createSession(collection: Collection, options?: DiffOptions, call?: CallOptions): Promise<SessionAnswer>;
  putSession(id: string, collection: Collection, options?: DiffOptions, call?: CallOptions): Promise<SessionAnswer>;
  getSession(id: string, call?: CallOptions & { window?: Window }): Promise<SessionState>;
  update(id: string, collection: Collection, options?: DiffOptions, call?: CallOptions): Promise<SessionAnswer>;
  append(id: string, collection: Collection, options?: DiffOptions, call?: CallOptions): Promise<SessionAnswer>;
  delta(id: string, collection: Collection, options?: DiffOptions, call?: CallOptions): Promise<SessionAnswer>;
  changes(id: string, operations: KeyedOperation[], options?: DiffOptions, call?: CallOptions): Promise<SessionAnswer>;
  patch(id: string, patch: PatchOperation[], options?: CallOptions & { format?: DeltaFormat; changes?: ChangeDetail }): Promise<SessionAnswer>;
  deleteSession(id: string, call?: CallOptions): Promise<void>;
  follow(id: string, options?: FollowOptions): Follower;
  live(id: string, options?: LiveOptions): LiveFollower;
}

/** A session's collection kept equal to it event by event. */
export class LiveArray {
  constructor(data?: SessionState);
  version: number | null;
  items: Item[] | null;
  sections: Section[] | null;
  options: SessionOptions;
  /** For a window: where its rows are. */
  window: WindowPlace | null;
  readonly sectioned: boolean;
  reset(data: SessionState): this;
  /** Throws a DeltaMismatch, changing nothing, where the delta does not fit. */
  apply(data: DeltaEvent): this;
  /** A window event: the same rows at its version. */
  moveWindow(data: WindowEvent): this;
}

/** Reads `text/event-stream` bytes into events. */
export class EventStreamParser {
  constructor(onEvent: (event: { type: string; data: string; id?: string }) => void);
  push(chunk: Uint8Array | string): void;
}

export function backoff(attempt: number, first?: number, most?: number): number;
/** A window's query parameters (ids as JSON); throws a TypeError for a window the server would refuse by its shape. */
export function windowQuery(window?: Window): Record<string, string | number>;
export function jsonEqual(a: unknown, b: unknown): boolean;
export function itemId(item: Item, idKey?: string): JSONValue | undefined;
export function itemKeys(items: Item[], options?: { idKey?: string; unique?: boolean }, seen?: Map<string, number>): string[];
export function keyOf(key: Key): string;
export function batchReplay<T>(old: T[], delta: IndexDelta, next: T[]): T[];
export function sequentialReplay<T>(old: T[], operations: SequentialOperation[], next: T[]): T[];
export function sectionedBatchReplay(old: Section[], sectionDelta: IndexDelta, itemDelta: IndexDelta<ItemPath>, next: Section[], itemsKey?: string): Section[];
export function sectionedSequentialReplay(old: Section[], operations: SequentialOperation[], next: Section[], itemsKey?: string): Section[];
export function keyedReplay(old: Item[], operations: KeyedOperation[], options?: DiffOptions): Item[];
export function sectionedKeyedReplay(old: Section[], operations: KeyedOperation[], options?: DiffOptions): Section[];
export function applyPatch<T extends JSONValue>(document: T, patch: PatchOperation[]): T;
