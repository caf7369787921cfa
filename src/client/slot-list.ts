/**
 * A set of objects that each know their index in it: add, delete and has in constant time without
 * hashing. A Set that empties gives up its table and allocates a new one on the next add, and the
 * producer's sets of active partitions and unsettled batches empty at every request when traffic
 * is light; an array emptied by `pop` keeps its store. Deleting moves the last member into the
 * freed slot, so the order is not kept. An object belongs to one SlotList at most.
 */
export interface Slotted {
  /** The member's index in its list; -1 when in none. */
  listSlot: number;
}

export class SlotList<T extends Slotted> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  /** The members, to read by index (from the end when the loop may delete the current one). */
  get items(): readonly T[] {
    return this.#items;
  }

  has(item: T): boolean {
    const slot = item.listSlot;
    return slot >= 0 && this.#items[slot] === item;
  }

  add(item: T): void {
    if (this.has(item)) return;
    item.listSlot = this.#items.length;
    this.#items.push(item);
  }

  delete(item: T): void {
    if (!this.has(item)) return;
    const items = this.#items;
    const last = items.pop()!;
    if (last !== item) {
      items[item.listSlot] = last;
      last.listSlot = item.listSlot;
    }
    item.listSlot = -1;
  }
}
