/**
 * Partition counts of topics, learned with DescribeTopic and cached: the producer needs one to
 * place a message by key or round-robin. A lookup that misses starts one DescribeTopic for the
 * topic (never two at once) and tells the listener when it lands or fails for good. Every
 * `maxAgeMs` the cached counts are asked again in the background (one timer, nothing per lookup),
 * so a topic that gained partitions (CreatePartitions) is spread over all of them from then on.
 * A topic's first lookup also waits for its leaders (BrokerPool.whenKnown, asked at the same time),
 * so that its first batches go to their leaders rather than wherever the bootstrap address is.
 * Only the count is read, so the newest DescribeTopic serves: it does not wait for figures (a
 * single-node broker recovering the topic after a crash) nor fail on them (a silent leader).
 */
import type { ConchError } from "../format/errors.js";
import { Backoff, delay } from "./backoff.js";
import type { BrokerPool } from "./broker-pool.js";
import { describeTopicNewest } from "./describe-topic-versions.js";
import { asConchError } from "./errors.js";

/** How often cached partition counts are asked again by default (Kafka's metadata.max.age.ms). */
export const DEFAULT_METADATA_MAX_AGE_MS = 300_000;

export interface TopicMetadataListener {
  /** A topic's partition count is now known. */
  learned(topic: string): void;
  /** A topic's partition count could not be learned (unknown topic, or retries ran out). */
  failed(topic: string, err: ConchError): void;
}

export class TopicMetadata {
  #pool: BrokerPool;
  #listener: TopicMetadataListener;
  #counts = new Map<string, number>();
  /** Lookups under way: each settles with undefined once learned, or with why it failed. */
  #loading = new Map<string, Promise<ConchError | undefined>>();
  #retryForMs: number;
  #closed = new AbortController();
  #refresh: NodeJS.Timeout;

  constructor(
    pool: BrokerPool,
    listener: TopicMetadataListener,
    retryForMs: number,
    maxAgeMs = DEFAULT_METADATA_MAX_AGE_MS,
  ) {
    this.#pool = pool;
    this.#listener = listener;
    this.#retryForMs = retryForMs;
    this.#refresh = setInterval(() => this.#refreshAll(), maxAgeMs).unref();
  }

  /** The cached partition count, or undefined after starting to learn it. */
  partitionCount(topic: string): number | undefined {
    const n = this.#counts.get(topic);
    if (n === undefined && !this.#loading.has(topic)) this.#start(topic);
    return n;
  }

  /** The partition count, learned now if it is not cached; rejects as the lookup failed. */
  async ensure(topic: string): Promise<number> {
    for (;;) {
      const n = this.#counts.get(topic);
      if (n !== undefined) return n;
      const err = await (this.#loading.get(topic) ?? this.#start(topic));
      if (err !== undefined) throw err;
    }
  }

  /** Forgets a topic (it was deleted or re-created): the next lookup asks the broker again. */
  invalidate(topic: string): void {
    this.#counts.delete(topic);
  }

  close(): void {
    clearInterval(this.#refresh);
    this.#closed.abort();
  }

  /** Asks again for every cached count; the old one is used until the answer lands. */
  #refreshAll(): void {
    for (const topic of this.#counts.keys()) if (!this.#loading.has(topic)) void this.#start(topic);
  }

  #start(topic: string): Promise<ConchError | undefined> {
    const loading = this.#load(topic);
    this.#loading.set(topic, loading);
    return loading;
  }

  async #load(topic: string): Promise<ConchError | undefined> {
    // #start records the lookup when this returns at its first await, before any delete below.
    const backoff = new Backoff({ initialMs: 50, maxMs: 1000 });
    const giveUpAt = performance.now() + this.#retryForMs;
    const signal = this.#closed.signal;
    try {
      for (;;) {
        try {
          const [res] = await Promise.all([
            describeTopicNewest(this.#pool.bootstrap, topic, { signal }),
            this.#pool.whenKnown(topic),
          ]);
          this.#counts.set(topic, res.partitions.length);
          this.#loading.delete(topic);
          this.#listener.learned(topic);
          return undefined;
        } catch (err) {
          const e = asConchError(err);
          if (!e.retriable || signal.aborted || performance.now() >= giveUpAt) throw e;
          await delay(backoff.next(), signal, () => e);
        }
      }
    } catch (err) {
      const e = asConchError(err);
      this.#loading.delete(topic);
      this.#listener.failed(topic, e);
      return e;
    }
  }
}
