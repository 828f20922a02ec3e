// A DOM list that shows a session's collection, flat or sectioned, one element per item keyed
// by the session's own idKey (dotted paths too, repeated ids by occurrence), and animates what
// moved (FLIP: each element starts where it was and slides to its new place). Items are written
// with textContent only: no item can inject markup, whatever its fields hold.
import { itemId, itemKeys, jsonEqual, keyOf } from "./appliers.js";

const TITLE_FIELDS = ["title", "name", "label", "text"];

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
 * id, then its title (the first of title, name, label, text that is a string), else its other
 * fields as `name: value`.
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
  const title = TITLE_FIELDS.find((field) => typeof item[field] === "string");
  const top = idKey.split(".")[0];
  text.textContent = title
    ? item[title]
    : Object.entries(item).filter(([name]) => name !== top).map(([name, value]) => `${name}: ${textOf(value)}`).join(", ");
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
  constructor(container, { render, renderHeader, itemTag = "li", animate = true } = {}) {
    this.container = container;
    this.render = render ?? renderItem;
    this.renderHeader = renderHeader ?? renderSection;
    this.itemTag = itemTag;
    this.animate = animate;
    this.items = new Map();
    this.sections = new Map();
    this.shown = new WeakMap();
  }

  /** Shows `collection` (a LiveArray, or `{items | sections, options}`). */
  show(collection) {
    const options = { idKey: "id", sectionIdKey: "id", itemsKey: "items", unique: true, ...(collection.options ?? {}) };
    const before = this.animate ? this.#positions() : null;
    const keptItems = new Set();
    if (collection.sections) {
      const seen = new Map();
      const keptSections = new Set();
      collection.sections.forEach((section, at) => {
        const key = keyOf(itemId(section, options.sectionIdKey));
        keptSections.add(key);
        const element = this.#section(key, section, options);
        this.#place(this.container, element, at);
        const items = section[options.itemsKey] ?? [];
        this.#fill(element.querySelector(":scope > ul"), items, itemKeys(items, options, seen), options, keptItems);
      });
      for (const [key, element] of this.sections) {
        if (!keptSections.has(key)) {
          element.remove();
          this.sections.delete(key);
        }
      }
    } else {
      for (const element of this.sections.values()) element.remove();
      this.sections.clear();
      const items = collection.items ?? [];
      this.#fill(this.container, items, itemKeys(items, options), options, keptItems);
    }
    for (const [key, element] of this.items) {
      if (!keptItems.has(key)) {
        element.remove();
        this.items.delete(key);
      }
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
    }
    const { [options.itemsKey]: _, ...header } = section;
    if (!jsonEqual(this.shown.get(element), header)) {
      this.shown.set(element, header);
      this.renderHeader(section, element.firstChild, options);
    }
    return element;
  }

  #fill(list, items, keys, options, kept) {
    items.forEach((item, at) => {
      const key = keys[at];
      kept.add(key);
      let element = this.items.get(key);
      if (!element) {
        element = document.createElement(this.itemTag);
        element.dataset.key = key;
        this.items.set(key, element);
      }
      if (!this.shown.has(element) || (this.shown.get(element) !== item && !jsonEqual(this.shown.get(element), item))) {
        this.shown.set(element, item);
        this.render(item, element, options);
      }
      this.#place(list, element, at);
    });
    // Elements left after these belong to a later section now (its pass moves them there) or
    // to none (the pass over all keys removes them).
  }

  #place(list, element, at) {
    if (list.children[at] !== element) list.insertBefore(element, list.children[at] ?? null);
  }

  #positions() {
    const positions = new Map();
    for (const element of [...this.items.values(), ...this.sections.values()]) {
      if (element.isConnected) positions.set(element, element.getBoundingClientRect().top);
    }
    return positions;
  }

  #slide(before) {
    if (globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches) return;
    for (const element of [...this.items.values(), ...this.sections.values()]) {
      const top = before.get(element);
      if (top === undefined) {
        element.animate?.([{ opacity: 0 }, { opacity: 1 }], { duration: 200 });
        continue;
      }
      const shift = top - element.getBoundingClientRect().top;
      if (Math.abs(shift) > 0.5) element.animate?.([{ transform: `translateY(${shift}px)` }, { transform: "none" }], { duration: 250, easing: "ease-out" });
    }
  }
}
