// Appliers: each delta format, flat and sectioned, applied to plain data (an array of items, or
// a list of sections) without changing it, and LiveArray, which keeps a session's collection
// equal to it event by event. Part of the livedelta package (re-exported by livedelta.js).

/** Whether a delta event holds something to apply (a version over the thresholds may not). */
export function hasDelta(data) {
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
    this.window = null;
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
    // A window's rows: where they are in the session, and its total.
    this.window = data.window ?? null;
    return this;
  }

  /** A window event: the same rows at a new version, somewhere else or among another total. */
  moveWindow(data) {
    if (this.version !== null && data.baseVersion !== this.version) {
      fail(`the window event starts at version ${data.baseVersion}, the list is at ${this.version}`);
    }
    this.version = data.version;
    this.window = data.window ?? this.window;
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
    this.window = data.window ?? this.window;
    return this;
  }

  #flat(format, data) {
    const old = this.items;
    switch (format) {
      case "batch": {
        if (data.rows) return batchReplay(old, data.delta, placed(data, batchPositions(data.delta)));
        return checked(batchReplay(old, data.delta, needs(data.items, "items")), data.items);
      }
      case "sequential": {
        if (data.rows) return sequentialReplay(old, data.sequential, placed(data, sequentialPositions(data.sequential)));
        return checked(sequentialReplay(old, data.sequential, needs(data.items, "items")), data.items);
      }
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

/** Where a batch delta's carried `rows` (`rows=changed`) go: its insertions, then its reloads' targets. */
function batchPositions(delta) {
  if (!delta) fail("no delta");
  return [...(delta.insertions ?? []), ...(delta.reloads ?? []).map((reload) => reload.target)];
}

/** Where sequential steps' carried `rows` go: each insert and change step's, step by step. */
function sequentialPositions(operations) {
  const positions = [];
  for (const op of operations ?? []) {
    if (op.op !== "insert" && op.op !== "change") continue;
    for (let row = op.position; row < op.position + op.count; row++) positions.push(row);
  }
  return positions;
}

/**
 * The new list as far as an event with only the changed `rows` gives it: each row at its
 * position, the others empty (the delta keeps the rows the list holds there).
 */
function placed(data, positions) {
  if (!Number.isInteger(data.newCount)) fail("the event carries rows but no newCount");
  if (data.rows.length !== positions.length) fail(`the event carries ${data.rows.length} rows for ${positions.length} positions`);
  const next = new Array(data.newCount);
  positions.forEach((position, i) => (next[index(position, data.newCount, "row position")] = data.rows[i]));
  return next;
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
