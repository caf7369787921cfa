/**
 * Fetched batches of all assigned partitions, in arrival order, waiting for the application.
 * Partition fetchers deliver into it; the consumer's iterators take from it. Taking a batch tells
 * its partition to fetch the next one. Stale batches (their partition was seeked or unassigned) are
 * skipped when taken. A partition's fatal error is thrown once, to the taker after the batches the
 * partition delivered before it (the data before a corrupt batch is good). A paused partition's
 * batches are parked as they are met and handed out first when it resumes.
 *
 * A batch an iterator left part-read (the application broke out of its loop) comes back through
 * `putBack` and is handed out again before anything else: it is older than any batch of its
 * partition still queued, and its partition already counted it as taken.
 */
import { ConchError } from "../format/errors.js";
import type { BatchSource, ConsumerBatch } from "./consumer-batch.js";
import { abortedError } from "./errors.js";
import type { FetchSink, PartitionFetcher } from "./partition-fetcher.js";

interface Waiter {
  readonly resolve: (batch: ConsumerBatch | null) => void;
  readonly reject: (err: ConchError) => void;
  readonly signal: AbortSignal | undefined;
}

export class BatchQueue implements FetchSink {
  /** Batches, and the fatal errors of partitions in the order they came. */
  #items: (ConsumerBatch | ConchError)[] = [];
  #head = 0;
  #waiters: Waiter[] = [];
  #errors: ConchError[] = [];
  /** Part-read batches put back, oldest first; rare, so a plain array. */
  #putBack: ConsumerBatch[] = [];
  /** Batches of paused partitions, in the order they were met, until their partition resumes. */
  #parked: ConsumerBatch[] = [];
  #ended = false;
  /**
   * The signals the queue listens to, each kept from one wait to the next: an iterator passes the
   * same one every time, and a listener added and removed per wait was a measurable share of a
   * tailing consumer's garbage. A new signal drops the listeners nobody waits on; end drops all.
   */
  #watches: { readonly signal: AbortSignal; readonly listener: () => void }[] = [];

  get ended(): boolean {
    return this.#ended;
  }

  deliver(batch: ConsumerBatch): void {
    if (this.#ended) return;
    this.#items.push(batch);
    this.#wake();
  }

  /** Hands `batch` out again before anything queued (see above); held back while its partition is paused. */
  putBack(batch: ConsumerBatch): void {
    if (this.#ended) return;
    if (batch.source.paused) this.#parked.push(batch);
    else this.#putBack.push(batch);
    this.#wake();
  }

  /** A paused partition resumed: its parked batches are handed out first, oldest first. */
  resumed(source: BatchSource): void {
    if (this.#parked.length === 0) return;
    const parked = this.#parked;
    this.#parked = parked.filter((b) => b.source !== source && !b.stale);
    for (const b of parked) if (b.source === source) this.#putBack.push(b);
    this.#wake();
  }

  /** A partition's fatal error: thrown once, after the batches it delivered before it. */
  fail(_source: PartitionFetcher, err: ConchError): void {
    if (this.#ended) return;
    this.#items.push(err);
    this.#wake();
  }

  /** No more batches: takers get null from now on. */
  end(reason?: ConchError): void {
    if (this.#ended) return;
    if (reason !== undefined) this.#errors.push(reason);
    this.#ended = true;
    this.#items = [];
    this.#head = 0;
    this.#putBack = [];
    this.#parked = [];
    this.#wake();
    this.#unwatchAll();
  }

  /** The next batch if one is here now; null if none. Throws a pending error. */
  take(): ConsumerBatch | null {
    const err = this.#errors.shift();
    if (err !== undefined) throw err;
    while (this.#putBack.length > 0) {
      const batch = this.#putBack.shift()!;
      if (batch.stale) continue;
      if (!batch.source.paused) return batch;
      this.#parked.push(batch);
    }
    while (this.#head < this.#items.length) {
      const items = this.#items;
      const batch = items[this.#head]!;
      items[this.#head++] = undefined as unknown as ConsumerBatch;
      // Emptied: start a fresh array (the loop condition then ends the scan).
      if (this.#head === items.length) {
        this.#items = [];
        this.#head = 0;
      }
      if (batch instanceof ConchError) throw batch;
      if (batch.stale) continue;
      // Counted as taken now: a paused partition fetches nothing more meanwhile anyway.
      (batch.source as PartitionFetcher).taken(batch);
      if (!batch.source.paused) return batch;
      this.#parked.push(batch);
    }
    return null;
  }

  /** The next batch, waiting for one; null once the queue has ended. */
  wait(signal?: AbortSignal): Promise<ConsumerBatch | null> {
    try {
      const batch = this.take();
      if (batch !== null || this.#ended) return Promise.resolve(batch);
    } catch (err) {
      return Promise.reject(err);
    }
    if (signal?.aborted) return Promise.reject(abortedError(signal, "consume"));
    if (signal !== undefined) this.#watch(signal);
    return new Promise<ConsumerBatch | null>((resolve, reject) => {
      this.#waiters.push({ resolve, reject, signal });
    });
  }

  #watch(signal: AbortSignal): void {
    for (const w of this.#watches) if (w.signal === signal) return;
    const kept = [];
    for (const w of this.#watches) {
      if (this.#waiters.some((waiter) => waiter.signal === w.signal)) kept.push(w);
      else w.signal.removeEventListener("abort", w.listener);
    }
    const listener = (): void => this.#aborted(signal);
    kept.push({ signal, listener });
    this.#watches = kept;
    signal.addEventListener("abort", listener, { once: true });
  }

  /** A signal aborted: its waits fail with ABORTED. */
  #aborted(signal: AbortSignal): void {
    this.#watches = this.#watches.filter((w) => w.signal !== signal);
    const waiters = this.#waiters;
    this.#waiters = waiters.filter((w) => w.signal !== signal);
    for (const w of waiters) if (w.signal === signal) w.reject(abortedError(signal, "consume"));
  }

  #unwatchAll(): void {
    for (const w of this.#watches) w.signal.removeEventListener("abort", w.listener);
    this.#watches = [];
  }

  #wake(): void {
    while (this.#waiters.length > 0) {
      let batch: ConsumerBatch | null;
      try {
        batch = this.take();
      } catch (err) {
        this.#waiters.shift()!.reject(err as ConchError);
        continue;
      }
      if (batch === null && !this.#ended) return;
      this.#waiters.shift()!.resolve(batch);
    }
  }
}
