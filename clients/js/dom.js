// A DOM list that shows a session's collection, flat or sectioned, one element per item keyed
// by the session's own idKey (dotted paths too, repeated ids by occurrence), and animates what
// moved (FLIP: each element starts where it was and slides to its new place), fades in what
// came and out what went, and flashes what changed. Items are written
// with textContent only: no item can inject markup, whatever its fields hold.
import { itemId, itemKeys, jsonEqual, keyOf } from "./appliers.js";

const TITLE_FIELDS = ["title", "name", "label", "text"];
// Past this many elements a change is shown at once, not animated: measuring every element's
// place before and after costs more than a frame, and a reader sees a screenful of them.
const ANIMATED = 2000;

const HIGHLIGHT = "#fff1b8";

function reducedMotion() {
  return globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
}

/**
 * A deleted element fades out where it was: a copy of it, fixed over its last place, so that
 * the list itself is never held up by it (its rows close up at once, sliding).
 */
function fadeOut(element, rect) {
  if (!rect || !element.animate || rect.height === 0) return;
  const ghost = element.cloneNode(true);
  ghost.removeAttribute("data-key");
  ghost.classList.add("livedelta-leaving");
  ghost.setAttribute("aria-hidden", "true");
  const style = getComputedStyle(element);
  Object.assign(ghost.style, {
    position: "fixed", top: `${rect.top}px`, left: `${rect.left}px`, width: `${rect.width}px`, height: `${rect.height}px`,
    margin: "0", boxSizing: "border-box", listStyle: "none", pointerEvents: "none", font: style.font, color: style.color,
  });
  document.body.append(ghost);
  ghost.animate([{ opacity: 1 }, { opacity: 0 }], { duration: 200, easing: "ease-in" }).finished.then(
    () => ghost.remove(),
    () => ghost.remove(),
  );
}

/** Puts `element` where `next` is in `list` (where it is already, leaves it); the next place. */
function place(list, element, next) {
  if (element === next) return next.nextElementSibling;
  // A row of a flat list the next section took (a flat session became sectioned): at the end.
  const before = next?.parentNode === list ? next : null;
  list.insertBefore(element, before);
  return before;
}

/** A value as one line of text: strings as they are, anything else as JSON. */
export function textOf(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * How an item is shown where the app gives no `render`: a scalar as its text; an object as its
 * id, then its title (the first of title, name, label, text that is a string, in the item or,
 * under a dotted idKey, beside the id), else its other fields as `name: value`.
 */
export function renderItem(item, element, { idKey = "id" } = {}) {
  element.replaceChildren();
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    const text = document.createElement("span");
    text.className = "livedelta-text";
    text.textContent = textOf(item);
    element.append(text);
    return;
  }
  const id = document.createElement("code");
  id.className = "livedelta-id";
  id.textContent = textOf(itemId(item, idKey));
  const text = document.createElement("span");
  text.className = "livedelta-text";
  // Under a dotted idKey (`movie.id`) the title may sit beside the id (`movie.title`).
  const path = idKey.split(".");
  const holder = path.slice(0, -1).reduce((value, key) => (value !== null && typeof value === "object" ? value[key] : undefined), item);
  const titled = [item, holder].find((value) => value !== null && typeof value === "object" && TITLE_FIELDS.some((field) => typeof value[field] === "string"));
  text.textContent = titled
    ? titled[TITLE_FIELDS.find((field) => typeof titled[field] === "string")]
    : Object.entries(item).filter(([name]) => name !== path[0]).map(([name, value]) => `${name}: ${textOf(value)}`).join(", ");
  element.append(id, text);
}

/** A section's header where the app gives no `renderSection`: its title, else its id. */
export function renderSection(section, header, { sectionIdKey = "id", itemsKey = "items" } = {}) {
  const title = TITLE_FIELDS.find((field) => field !== itemsKey && typeof section[field] === "string");
  header.textContent = title ? section[title] : textOf(itemId(section, sectionIdKey));
}

/**
 * Shows a collection in `container`: for a flat session one `itemTag` element per item, for a
 * sectioned one a `<section>` per section (a header, then an `<ul>` of its items). `show` takes
 * a `LiveArray` (or `{items | sections, options}`) and changes only what differs: elements are
 * kept by key, moved, added and removed, and re-rendered where their item changed.
 */
export class LiveList {
  constructor(container, { render, renderHeader, itemTag = "li", animate = true, lazy = false, rowHeight = 40 } = {}) {
    this.container = container;
    this.render = render ?? renderItem;
    this.renderHeader = renderHeader ?? renderSection;
    this.itemTag = itemTag;
    this.animate = animate;
    this.items = new Map();
    this.sections = new Map();
    this.shown = new WeakMap();
    // Lazy sections: a section's rows are made when it comes near the viewport, not before; until
    // then its list is an empty box as tall as its rows would be (rowHeight each). Making 100,000
    // rows' elements is most of what showing them costs, and a reader sees a screenful.
    this.rowHeight = rowHeight;
    this.pending = new Map();
    this.built = new WeakSet();
    this.observer = lazy && typeof IntersectionObserver === "function"
      ? new IntersectionObserver((entries) => {
        for (const entry of entries) if (entry.isIntersecting) this.#build(entry.target);
      }, { rootMargin: "1000px 0px" })
      : null;
  }

  /** Shows `collection` (a LiveArray, or `{items | sections, options}`). */
  show(collection) {
    const options = { idKey: "id", sectionIdKey: "id", itemsKey: "items", unique: true, ...(collection.options ?? {}) };
    // What stays is known first, and what goes is removed before anything is placed: each
    // element is then placed by a cursor walking the list once, so showing n rows costs O(n)
    // DOM operations, whatever moved (an index into a list being changed is a walk from its
    // start in the browser, and that made a whole replacement quadratic).
    const sections = collection.sections ?? null;
    const seen = new Map();
    const keyed = sections
      ? sections.map((section) => {
        const items = section[options.itemsKey] ?? [];
        return { key: keyOf(itemId(section, options.sectionIdKey)), section, items, keys: itemKeys(items, options, seen) };
      })
      : null;
    const items = sections ? [] : collection.items ?? [];
    const keys = sections ? [] : itemKeys(items, options);
    const keptItems = new Set(sections ? keyed.flatMap((entry) => entry.keys) : keys);
    const keptSections = new Set(sections ? keyed.map((entry) => entry.key) : []);
    const count = keptItems.size + keptSections.size + this.items.size + this.sections.size;
    const before = this.animate && count <= ANIMATED && !reducedMotion() ? this.#positions() : null;
    this.changed = before ? [] : null;
    // Rows that go leave their lists; a list that loses every row is emptied at once (a whole
    // replacement: one call, not a removal per row).
    const leaving = new Map();
    for (const [key, element] of this.items) {
      if (!keptItems.has(key)) {
        if (before) fadeOut(element, before.get(element));
        const list = element.parentNode;
        if (list && leaving.has(list)) leaving.get(list).push(element);
        else if (list) leaving.set(list, [element]);
        this.items.delete(key);
      }
    }
    for (const [list, gone] of leaving) {
      if (gone.length === list.childElementCount) list.replaceChildren();
      else for (const element of gone) element.remove();
    }
    for (const [key, element] of this.sections) {
      if (!keptSections.has(key)) {
        if (before) fadeOut(element, before.get(element));
        element.remove();
        this.sections.delete(key);
        this.pending.delete(element);
        this.observer?.unobserve(element);
      }
    }
    if (sections) {
      let next = this.container.firstElementChild;
      for (const entry of keyed) {
        const element = this.#section(entry.key, entry.section, options);
        next = place(this.container, element, next);
        if (this.observer && !this.built.has(element)) this.#defer(element, entry, options);
        else this.#fill(element.lastChild, entry.items, entry.keys, options);
      }
    } else {
      this.#fill(this.container, items, keys, options);
    }
    if (before) this.#slide(before);
  }

  #section(key, section, options) {
    let element = this.sections.get(key);
    if (!element) {
      element = document.createElement("section");
      element.className = "livedelta-section";
      element.dataset.key = key;
      element.append(document.createElement("h2"), document.createElement("ul"));
      element.firstChild.className = "livedelta-section-title";
      element.lastChild.className = "livedelta-items";
      this.sections.set(key, element);
      this.observer?.observe(element);
    }
    const { [options.itemsKey]: _, ...header } = section;
    if (!jsonEqual(this.shown.get(element), header)) {
      this.shown.set(element, header);
      this.renderHeader(section, element.firstChild, options);
    }
    return element;
  }

  /** Keeps a section's rows to make when it comes into view; a row shown elsewhere leaves. */
  #defer(element, entry, options) {
    for (const key of entry.keys) {
      const row = this.items.get(key);
      if (row) {
        row.remove();
        this.items.delete(key);
      }
    }
    this.pending.set(element, { items: entry.items, keys: entry.keys, options });
    element.lastChild.dataset.rows = entry.items.length;
    element.lastChild.style.height = `${entry.items.length * this.rowHeight}px`;
  }

  /** Makes the rows of a section that came into view. */
  #build(element) {
    const record = this.pending.get(element);
    if (!record) return;
    this.pending.delete(element);
    this.built.add(element);
    delete element.lastChild.dataset.rows;
    element.lastChild.style.height = "";
    this.#fill(element.lastChild, record.items, record.keys, record.options);
  }

  #fill(list, items, keys, options) {
    // Rows going into an empty list are built apart and put in with one call: the browser then
    // takes them in as one change, not one per row.
    const fresh = list.firstElementChild === null ? document.createDocumentFragment() : null;
    let next = list.firstElementChild;
    items.forEach((item, at) => {
      const key = keys[at];
      let element = this.items.get(key);
      if (!element) {
        element = document.createElement(this.itemTag);
        element.dataset.key = key;
        this.items.set(key, element);
      }
      if (!this.shown.has(element) || (this.shown.get(element) !== item && !jsonEqual(this.shown.get(element), item))) {
        if (this.shown.has(element)) this.changed?.push(element);
        this.shown.set(element, item);
        this.render(item, element, options);
      }
      if (fresh) fresh.append(element);
      else next = place(list, element, next);
    });
    if (fresh) list.append(fresh);
    // Elements left after these belong to a later section (its pass moves them there).
  }

  #positions() {
    const positions = new Map();
    for (const element of [...this.items.values(), ...this.sections.values()]) {
      if (element.isConnected) positions.set(element, element.getBoundingClientRect());
    }
    return positions;
  }

  #slide(before) {
    const elements = [...this.items.values(), ...this.sections.values()];
    // Every place is read before any animation starts: a read after an animation began would
    // lay the page out again, once per element.
    const shifts = elements.map((element) => {
      const was = before.get(element);
      return was === undefined ? null : was.top - element.getBoundingClientRect().top;
    });
    elements.forEach((element, i) => {
      const shift = shifts[i];
      if (shift === null) element.animate?.([{ opacity: 0 }, { opacity: 1 }], { duration: 200 });
      else if (Math.abs(shift) > 0.5) element.animate?.([{ transform: `translateY(${shift}px)` }, { transform: "none" }], { duration: 250, easing: "ease-out" });
    });
    // A changed row flashes, and fades back to its own background.
    for (const element of this.changed) element.animate?.([{ backgroundColor: HIGHLIGHT, offset: 0 }], { duration: 700, easing: "ease-out" });
    this.changed = null;
  }
}
