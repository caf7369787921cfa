/**
 * One timer for every partition log in the process. A log's timed work (its flush interval, tail
 * trimming, retention checks, compaction checks, long-poll deadlines) is a TickTask scheduled here
 * only while it has something due, so a broker with 10,000 idle partitions runs no timer per
 * partition and wakes only when some task is due. The tasks sit in a min-heap by due time; the one
 * Node timer is armed for the earliest.
 *
 * Scheduling allocates nothing: a task is made once per log and kind and knows its slot in the heap.
 * Moving a task later than the armed time leaves the timer alone; it fires, finds the task not yet
 * due, and re-arms (a consumer that keeps up pushes its deadline on every produce, and re-arming a
 * Node timer each time was a measurable share of the broker's work).
 */

/** Work a ticker runs once at a due time. Made once, scheduled again as often as needed. */
export class TickTask {
  /** performance.now() time it is due at, while scheduled. */
  at = Number.POSITIVE_INFINITY;
  /** Its index in the ticker's heap while scheduled, else -1 (managed by Ticker). */
  slot = -1;
  /** Whether, while scheduled, it holds the process open (a long-poll deadline does; upkeep does not). */
  keepsAlive = false;
  readonly run: (now: number) => void;

  /** `run` is called once each time the task comes due; it must not throw. */
  constructor(run: (now: number) => void) {
    this.run = run;
  }

  get scheduled(): boolean {
    return this.slot >= 0;
  }
}

export class Ticker {
  readonly #heap: TickTask[] = [];
  #timer: NodeJS.Timeout | null = null;
  #timerAt = Number.POSITIVE_INFINITY;
  /** Scheduled tasks with keepsAlive set: the timer is ref'd while there are any. */
  #alive = 0;
  /** Due tasks are running: the timer is armed once they are done, not by each reschedule. */
  #running = false;
  readonly #fire = (): void => this.#fired();
  #runs = 0;
  #wakeUps = 0;

  /** Tasks scheduled (for tests and metrics). */
  get size(): number {
    return this.#heap.length;
  }

  /** Tasks run since the ticker was made (for tests: an idle broker runs none). */
  get runs(): number {
    return this.#runs;
  }

  /** Times its timer fired since it was made, whether or not a task was due. */
  get wakeUps(): number {
    return this.#wakeUps;
  }

  /** Schedules `task` at `at` (performance.now() time), or moves it there if already scheduled. */
  schedule(task: TickTask, at: number): void {
    const heap = this.#heap;
    if (task.slot < 0) {
      task.at = at;
      task.slot = heap.length;
      heap.push(task);
      if (task.keepsAlive) this.#addAlive(1);
      this.#up(task.slot);
    } else if (at < task.at) {
      task.at = at;
      this.#up(task.slot);
    } else {
      task.at = at;
      this.#down(task.slot);
    }
    if (at < this.#timerAt && !this.#running) this.#arm(at);
  }

  /** Takes `task` out; nothing happens if it is not scheduled. */
  cancel(task: TickTask): void {
    const slot = task.slot;
    const heap = this.#heap;
    if (slot < 0 || heap[slot] !== task) return;
    const last = heap.pop()!;
    task.slot = -1;
    if (task.keepsAlive) this.#addAlive(-1);
    if (last !== task) {
      heap[slot] = last;
      last.slot = slot;
      this.#down(slot);
      this.#up(last.slot);
    }
    // The timer stays armed: it fires, finds nothing due, and re-arms for what is left, if anything.
  }

  /** Whether `task` holds the process open while scheduled. */
  keepAlive(task: TickTask, keep: boolean): void {
    if (task.keepsAlive === keep) return;
    task.keepsAlive = keep;
    if (task.slot >= 0) this.#addAlive(keep ? 1 : -1);
  }

  #addAlive(n: number): void {
    const before = this.#alive;
    this.#alive += n;
    if (before === 0 && this.#alive > 0) this.#timer?.ref();
    else if (before > 0 && this.#alive === 0) this.#timer?.unref();
  }

  #arm(at: number): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(this.#fire, Math.max(0, Math.ceil(at - performance.now())));
    if (this.#alive === 0) this.#timer.unref();
  }

  #fired(): void {
    this.#timer = null;
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#wakeUps++;
    const heap = this.#heap;
    const now = performance.now();
    this.#running = true;
    try {
      // Each task is taken out before it runs, so one that schedules itself again goes back in place.
      while (heap.length > 0 && heap[0]!.at <= now) {
        const task = heap[0]!;
        this.cancel(task);
        this.#runs++;
        task.run(now);
      }
    } finally {
      this.#running = false;
      if (heap.length > 0) this.#arm(heap[0]!.at);
    }
  }

  #up(slot: number): void {
    const heap = this.#heap;
    const task = heap[slot]!;
    while (slot > 0) {
      const parent = (slot - 1) >> 1;
      const p = heap[parent]!;
      if (p.at <= task.at) break;
      heap[slot] = p;
      p.slot = slot;
      slot = parent;
    }
    heap[slot] = task;
    task.slot = slot;
  }

  #down(slot: number): void {
    const heap = this.#heap;
    const n = heap.length;
    const task = heap[slot]!;
    for (;;) {
      let child = 2 * slot + 1;
      if (child >= n) break;
      if (child + 1 < n && heap[child + 1]!.at < heap[child]!.at) child++;
      const c = heap[child]!;
      if (c.at >= task.at) break;
      heap[slot] = c;
      c.slot = slot;
      slot = child;
    }
    heap[slot] = task;
    task.slot = slot;
  }
}

/**
 * When periodic upkeep `intervalMs` from `now` is due, rounded up to a coarse boundary (at most a
 * second) so that the upkeep of many logs opened about together runs in one wake-up.
 */
export function coarseDue(now: number, intervalMs: number): number {
  const grain = Math.min(1000, intervalMs);
  return Math.ceil((now + intervalMs) / grain) * grain;
}

/** The ticker of the storage layer, shared by every partition log in the process. */
export const storageTicker = new Ticker();
