/**
 * Produces to one topic held in arrival order while a partitioned produce waits for partitions to
 * open (broker.ts, `producePartitioned`). Such a request would otherwise be split and appended
 * partition by partition as each opens, one write per partition, which is what made the first
 * seconds of a new topic of many partitions slow; waiting for its opens instead lets it be
 * deferred behind the shared log whole (shared-produce.ts). Every produce to the topic that comes
 * while one waits is held behind it, so a producer's records reach each partition in the order it
 * sent them; a held produce waits for the opens it needs itself (started at once, not in turn) and
 * runs once everything ahead of it has.
 */

/** A produce held by the gate. */
export interface HeldProduce {
  /** What it waits for besides its turn (its partitions' opens, bounded by its timeout), or null. */
  readonly ready: Promise<unknown> | null;
  /** Appends it (its turn came and `ready` resolved); called synchronously, in arrival order. */
  run(): void;
  /** `ready` failed: nothing is appended, and it is answered with `err`. */
  fail(err: unknown): void;
}

/** In the slot of an item taken off the queue, so that its records are not kept. */
const TAKEN: HeldProduce = { ready: null, run() {}, fail() {} };

export class ProduceGate {
  #items: HeldProduce[] = [];
  #head = 0;
  /** The head is being waited for, or items are being run: a new item just joins the queue. */
  #busy = false;
  /** An item's `run` is under way: what it produces itself goes straight through. */
  #running = false;
  readonly #drained: () => void;

  /** `drained` is called once nothing is held any more (the owner drops the gate). */
  constructor(drained: () => void) {
    this.#drained = drained;
  }

  /** Whether a produce that comes now must be held (something is held and not running now). */
  get holding(): boolean {
    return !this.#running && this.#head < this.#items.length;
  }

  /** Holds `item` behind everything held before it. */
  hold(item: HeldProduce): void {
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    this.#items.push(item);
    if (!this.#busy) this.#next(false);
  }

  /**
   * Runs the items at the head in turn; waits for the first whose `ready` has not resolved yet
   * (`headReady`: the head's has).
   */
  #next(headReady: boolean): void {
    this.#busy = true;
    while (this.#head < this.#items.length) {
      const item = this.#items[this.#head]!;
      if (item.ready !== null && !headReady) {
        item.ready.then(
          () => this.#next(true),
          (err: unknown) => {
            this.#take();
            item.fail(err);
            this.#next(false);
          },
        );
        return;
      }
      headReady = false;
      this.#take();
      this.#running = true;
      try {
        item.run();
      } catch (err) {
        item.fail(err);
      } finally {
        this.#running = false;
      }
    }
    this.#items = [];
    this.#head = 0;
    this.#busy = false;
    this.#drained();
  }

  #take(): void {
    this.#items[this.#head++] = TAKEN;
  }
}
