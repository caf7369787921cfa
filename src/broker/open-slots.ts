/**
 * The bound on partition logs opening or closing at once across the broker, with a queue that lets
 * the open a request waits for go first.
 */

/**
 * Partition logs opened or closed at once across every topic (the broker opens its topics
 * together): each is a few file system calls on the thread pool and may recover segment files or
 * write an index. With a cold page cache those calls wait on the disk, so more in flight than the
 * pool has threads shortens an open of 10,000 logs (8 at a time took 1.7 times as long as 32); but
 * closing 10,000 at once ran out of file descriptors (EMFILE: each close opens its index file
 * while every log still holds its segment).
 */
export const OPEN_CONCURRENCY = 32;
let opening = 0;

/** Waiters for a slot, first come first served, without shifting the array at every release. */
class SlotQueue {
  #items: (() => void)[] = [];
  #head = 0;

  push(resume: () => void): void {
    this.#items.push(resume);
  }

  take(): (() => void) | undefined {
    if (this.#head === this.#items.length) return undefined;
    const next = this.#items[this.#head++]!;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    }
    return next;
  }
}

/** Opens a request waits for go ahead of the background opener's and of whole-topic opens. */
const urgentQueue = new SlotQueue();
const openQueue = new SlotQueue();

/** Waits for one of the OPEN_CONCURRENCY slots (ahead of the others when `urgent`). */
export function openSlot(urgent = false): Promise<void> | undefined {
  if (opening < OPEN_CONCURRENCY) {
    opening++;
    return undefined;
  }
  return new Promise<void>((resolve) => (urgent ? urgentQueue : openQueue).push(resolve));
}

/** Hands the slot to the next waiter, or frees it. */
export function releaseSlot(): void {
  const next = urgentQueue.take() ?? openQueue.take();
  if (next !== undefined) next();
  else opening--;
}
