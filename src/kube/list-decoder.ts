// A list answer decoded item by item as its text arrives, instead of one JSON.parse of the whole page.
//
// Why: a page of 500 pods is ~2.5 MB of text and ~10 MB of parsed objects, all alive at once until the informer's
// transform has reduced every pod. Both outgrow the young generation (2 MiB semi-spaces, docs/performance.md "Node
// flags"), so each page lands in the old generation as garbage, and under `--optimize-for-size` every ~10 % of
// old-generation growth costs a full collection that marks the whole cache built so far. A 100 000-pod first list
// took 32–42 s of CPU that way, against 9–11 s for the plain list (docs/performance.md, "Heap growth").
// Decoded here, one item's text and objects are alive at a time: they die young, and only what the transform
// keeps reaches the old generation.
//
// The splitter scans the text once (strings, escapes and nesting only), hands each element of the top-level
// "items" array to JSON.parse on its own, and parses the rest of the object (kind, apiVersion, metadata with its
// resourceVersion and continue token) from the text left when the items are taken out. Nothing here
// interprets a value: JSON.parse does, so a malformed answer fails as it would have.

import type { KubeList } from './types.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

/** The text of the top-level object so far ends with the key `"items"` and its colon. */
const ENDS_WITH_ITEMS_KEY = /"items"\s*:\s*$/;

/** What the transport feeds an answer's text into, chunk by chunk; `end` returns the decoded value. */
export interface BodyDecoder {
  write(text: string): void;
  end(): unknown;
}

/**
 * Decodes a Kubernetes list (`{"kind":…,"metadata":{…},"items":[{…},…]}`), `map` applied to each item as soon as
 * it is parsed. `end` returns the list with its `items` the mapped ones, in order.
 */
export class ListDecoder<T> implements BodyDecoder {
  readonly #map: ((item: T) => T) | undefined;
  readonly #items: T[] = [];
  /** The top-level object's text without the items (`"items":[]`); parsed at the end. */
  #rest = '';
  /** Open objects and arrays around the scan position: 1 inside the top-level object, 2 inside its items array. */
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Inside the top-level "items" array. */
  #inItems = false;
  /** The parts of an item that began in an earlier chunk (empty when none is open). */
  #itemParts: string[] = [];
  /** An item is open (its `{` seen, its `}` not yet). */
  #inItem = false;

  constructor(map?: (item: T) => T) {
    this.#map = map;
  }

  write(text: string): void {
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    let inItems = this.#inItems;
    let inItem = this.#inItem;
    // Where the text of this chunk still to be kept starts: for the rest (outside the items) or for the open item.
    let from = 0;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
        continue;
      }
      if (c === QUOTE) {
        if (inItems && !inItem) throw new SyntaxError('list answer: an element of "items" is not an object');
        inString = true;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        depth++;
        if (inItems) {
          if (depth === 3) {
            if (c !== OPEN_OBJECT) throw new SyntaxError('list answer: an element of "items" is not an object');
            inItem = true;
            from = i;
          }
        } else if (depth === 2 && c === OPEN_ARRAY) {
          const before = this.#rest + text.slice(from, i);
          if (ENDS_WITH_ITEMS_KEY.test(before)) {
            // The items array: its elements are taken out, the brackets stay in the rest.
            this.#rest = `${before}[`;
            inItems = true;
            from = i + 1;
          }
        }
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        depth--;
        if (inItems) {
          if (depth === 2 && inItem) {
            const tail = text.slice(from, i + 1);
            const itemText = this.#itemParts.length === 0 ? tail : this.#itemParts.join('') + tail;
            this.#itemParts = [];
            inItem = false;
            this.#push(itemText);
          } else if (depth === 1) {
            inItems = false;
            from = i; // the `]` belongs to the rest
          }
        }
      } else if (inItems && !inItem && c !== COMMA && c !== SPACE && c !== LF && c !== CR && c !== TAB) {
        throw new SyntaxError('list answer: an element of "items" is not an object');
      }
    }
    if (inItems) {
      if (inItem) this.#itemParts.push(text.slice(from));
    } else {
      this.#rest += text.slice(from);
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    this.#inItems = inItems;
    this.#inItem = inItem;
  }

  #push(itemText: string): void {
    const item = JSON.parse(itemText) as T;
    this.#items.push(this.#map === undefined ? item : this.#map(item));
  }

  end(): KubeList<T> {
    if (this.#inItems || this.#inString || this.#depth !== 0) throw new SyntaxError('list answer: the text ended inside the object');
    const parsed: unknown = JSON.parse(this.#rest);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SyntaxError('list answer: not an object');
    const list = parsed as KubeList<T>;
    return { ...list, items: this.#items };
  }
}
