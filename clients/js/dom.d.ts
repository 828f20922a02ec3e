// Types of dom.js.
import type { DiffOptions, Item, Section, SessionOptions } from "./livedelta.js";

export type RenderItem = (item: Item, element: HTMLElement, options: SessionOptions) => void;
export type RenderHeader = (section: Section, header: HTMLElement, options: SessionOptions) => void;

/** A value as one line of text: strings as they are, anything else as JSON. */
export function textOf(value: unknown): string;
/** The default rendering of an item (its id, then its title or its fields), by textContent. */
export function renderItem(item: Item, element: HTMLElement, options?: { idKey?: string }): void;
/** The default rendering of a section's header (its title, else its id). */
export function renderSection(section: Section, header: HTMLElement, options?: { sectionIdKey?: string; itemsKey?: string }): void;

export interface LiveListOptions {
  render?: RenderItem;
  renderHeader?: RenderHeader;
  /** The element of each item (`li`). */
  itemTag?: string;
  /**
   * Slide what moved, fade in what came and out what went, flash what changed (true; off where
   * the reader prefers reduced motion, and for a change to over 2,000 elements).
   */
  animate?: boolean;
  /**
   * Make a section's rows only when it comes near the viewport (false): until then its list is
   * empty, `data-rows` says how many rows it holds, and it is `rowHeight` px a row tall.
   */
  lazy?: boolean;
  /** The height a row not made yet stands for (40 px). */
  rowHeight?: number;
}

/** A container kept equal to a collection, one element per item by key. */
export class LiveList {
  constructor(container: HTMLElement, options?: LiveListOptions);
  readonly container: HTMLElement;
  show(collection: { items?: Item[] | null; sections?: Section[] | null; options?: DiffOptions }): void;
}
