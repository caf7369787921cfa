/**
 * Fetched batches of all assigned partitions, in arrival order, waiting for the application.
 * Partition fetchers deliver into it; the consumer's iterators take from it. Taking a batch tells
 * its partition to fetch the next one. Stale batches (their partition was seeked or unassigned) are
 * skipped when taken. A partition's fatal error is thrown once, to the next taker.
 */
import type { ConchError } from "../format/errors.js";
import type { ConsumerBatch } from "./consumer-batch.js";
import { abortedError } from "./errors.js";
import type { FetchSink, PartitionFetcher } from "./partition-fetcher.js";

interface Waiter {
  resolve: (batch: ConsumerBatch | null) => void;
  reject: (err: ConchError) => void;
}

export class BatchQueue implements FetchSink {
  #items: ConsumerBatch[] = [];
  #head = 0;
  #waiters: Waiter[] = [];
  #errors: ConchError[] = [];
  #ended = false;

  get ended(): boolean {
    return this.#ended;
  }

  deliver(batch: ConsumerBatch): void {
    if (this.#ended) return;
    this.#items.push(batch);
    this.#wake();
  }

  fail(_source: PartitionFetcher, err: ConchError): void {
    this.#errors.push(err);
    this.#wake();
  }

  /** No more batches: takers get null from now on. */
  end(reason?: ConchError): void {
    if (this.#ended) return;
    if (reason !== undefined) this.#errors.push(reason);
    this.#ended = true;
    this.#items = [];
    this.#head = 0;
    this.#wake();
  }

  /** The next batch if one is here now; null if none. Throws a pending error. */
  take(): ConsumerBatch | null {
    const err = this.#errors.shift();
    if (err !== undefined) throw err;
    while (this.#head < this.#items.length) {
      const items = this.#items;
      const batch = items[this.#head]!;
      items[this.#head++] = undefined as unknown as ConsumerBatch;
      // Emptied: start a fresh array (the loop condition then ends the scan).
      if (this.#head === items.length) {
        this.#items = [];
        this.#head = 0;
      }
      if (batch.stale) continue;
      (batch.source as PartitionFetcher).taken(batch);
      return batch;
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
    return new Promise<ConsumerBatch | null>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(abortedError(signal, "consume"));
      };
      const waiter: Waiter = {
        resolve: (b) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(b);
        },
        reject: (e) => {
          signal?.removeEventListener("abort", onAbort);
          reject(e);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
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
