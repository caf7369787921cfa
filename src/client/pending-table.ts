/**
 * A connection's requests awaiting their responses, by correlation id. Ids are handed out in
 * sequence, so a request lives in the slot its id picks in a small ring; one that outlives a lap of
 * the ring (a long poll while many short requests pass it) moves to an overflow map when a newer
 * id needs its slot. Adding and taking allocate nothing in the common case. (A Map reallocated its
 * table whenever it emptied, which a connection with one request at a time does at every response.)
 */

/** Slots in the ring: more than the requests a connection usually has in flight. */
const RING_SLOTS = 256;

/** Correlation ids run from 1 to this (a u32 on the wire), then start again at 1. */
export const MAX_CORRELATION_ID = 0xffffffff;

/** The id after `id`. */
export function nextCorrelationId(id: number): number {
  return id === MAX_CORRELATION_ID ? 1 : id + 1;
}

export interface PendingEntry {
  readonly id: number;
}

export class PendingTable<T extends PendingEntry> {
  readonly #ring: (T | undefined)[] = new Array<T | undefined>(RING_SLOTS).fill(undefined);
  readonly #overflow = new Map<number, T>();
  #size = 0;
  /** The id added last: entries are listed by how far they lie behind it. */
  #newest = 0;

  get size(): number {
    return this.#size;
  }

  add(entry: T): void {
    const slot = entry.id & (RING_SLOTS - 1);
    const older = this.#ring[slot];
    if (older !== undefined) this.#overflow.set(older.id, older);
    this.#ring[slot] = entry;
    this.#size++;
    this.#newest = entry.id;
  }

  /** The entry with `id`, if it is here (left in place). */
  get(id: number): T | undefined {
    const entry = this.#ring[id & (RING_SLOTS - 1)];
    if (entry !== undefined && entry.id === id) return entry;
    return this.#overflow.size === 0 ? undefined : this.#overflow.get(id);
  }

  /** Removes and returns the entry with `id`, if it is here. */
  take(id: number): T | undefined {
    const slot = id & (RING_SLOTS - 1);
    const entry = this.#ring[slot];
    if (entry !== undefined && entry.id === id) {
      this.#ring[slot] = undefined;
      this.#size--;
      return entry;
    }
    if (this.#overflow.size === 0) return undefined;
    const old = this.#overflow.get(id);
    if (old === undefined) return undefined;
    this.#overflow.delete(id);
    this.#size--;
    return old;
  }

  /**
   * Every entry, oldest first: in the order they were added, which is the order their requests were
   * sent (a copy: the caller may take while it walks). Slot order is not that order once the ids
   * pass a multiple of the ring size, and a producer that resent its batches in slot order after
   * a lost connection stored them out of order.
   */
  entries(): T[] {
    const out: T[] = [];
    if (this.#size === 0) return out;
    for (const e of this.#ring) if (e !== undefined) out.push(e);
    for (const e of this.#overflow.values()) out.push(e);
    if (out.length > 1) out.sort(this.#olderFirst);
    return out;
  }

  /** How many ids `id` lies behind the newest one; ids wrap from MAX_CORRELATION_ID to 1. */
  #age(id: number): number {
    const behind = (this.#newest - id) % MAX_CORRELATION_ID;
    return behind < 0 ? behind + MAX_CORRELATION_ID : behind;
  }

  readonly #olderFirst = (a: T, b: T): number => this.#age(b.id) - this.#age(a.id);

  /** Removes and returns every entry, oldest first. */
  clear(): T[] {
    const all = this.entries();
    this.#ring.fill(undefined);
    this.#overflow.clear();
    this.#size = 0;
    return all;
  }
}
