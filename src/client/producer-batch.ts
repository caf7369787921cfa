/**
 * One batch on its way to a partition, and the completions of the messages in it.
 *
 * A message costs no object of its own here: the batch keeps one flat `sinks` array with two slots
 * per record — `(resolve, reject)` for a `send()`, `(group, index)` for a message of a `sendBatch()`
 * — and the broker's base offset is enough to complete all of them: record i gets base + i.
 */
import type { ConchError } from "../format/errors.js";

export interface RecordMetadata {
  partition: number;
  /** The record's offset, or -1 with acks = "none" (the broker does not say). */
  offset: number;
}

export type Resolve = (value: RecordMetadata) => void;
export type Reject = (reason: ConchError) => void;

/** The result of `sendBatch`: the partition and offset of message i at index i. */
export interface SendBatchResult {
  partitions: Uint32Array;
  offsets: Float64Array;
}

/**
 * The completion of one `sendBatch` call, shared by all its messages whatever batches they land in.
 * A one-message call (a common way to pipeline, and many may wait at once for an fsync) keeps its
 * partition and offset in two fields and makes its result arrays only when it resolves, so what
 * waits is one small object.
 */
export class SendGroup {
  #partitions: Uint32Array | null = null;
  #offsets: Float64Array | null = null;
  #partition0 = 0;
  #offset0 = 0;
  #remaining: number;
  #resolve: (value: SendBatchResult) => void;
  #reject: Reject;
  #failed = false;

  constructor(count: number, resolve: (value: SendBatchResult) => void, reject: Reject) {
    if (count !== 1) {
      this.#partitions = new Uint32Array(count);
      this.#offsets = new Float64Array(count);
    }
    this.#remaining = count;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** The partition message `index` went to. */
  setPartition(index: number, partition: number): void {
    if (this.#partitions === null) this.#partition0 = partition;
    else this.#partitions[index] = partition;
  }

  ack(index: number, offset: number): void {
    if (this.#offsets === null) this.#offset0 = offset;
    else this.#offsets[index] = offset;
    if (--this.#remaining === 0 && !this.#failed) this.#resolve(this.result());
  }

  /** Where each message went (complete once every message is acknowledged). */
  result(): SendBatchResult {
    if (this.#partitions !== null && this.#offsets !== null) {
      return { partitions: this.#partitions, offsets: this.#offsets };
    }
    // Not TypedArray.of: it goes through the iteration protocol and measured slower.
    const partitions = new Uint32Array(1);
    const offsets = new Float64Array(1);
    partitions[0] = this.#partition0;
    offsets[0] = this.#offset0;
    return { partitions, offsets };
  }

  /** The first failure rejects the whole call; later ones are ignored. */
  fail(err: ConchError): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#reject(err);
  }
}

export class ProducerBatch {
  readonly topic: string;
  readonly partition: number;
  /** Creation order within the partition: retried batches go back in this order. */
  readonly seq: number;
  /** Once sealed the batch takes no more records and `records` holds its bytes. */
  sealed = false;
  records: Buffer = EMPTY;
  /** The encode buffer `records` lives in, until the accumulator takes it back. */
  encoded: Buffer | null = null;
  count = 0;
  /** Bytes counted against the producer's buffer memory. */
  bytes = 0;
  /** Two slots per record; see the file comment. */
  readonly sinks: Array<Resolve | Reject | SendGroup | number> = [];
  /** Sends so far (1 after the first). */
  attempts = 0;
  /** When the batch was sealed (ms, monotonic clock), for the delivery timeout. */
  sealedAt = 0;
  settled = false;
  #whenSettled: Promise<void> | null = null;
  #onSettled: (() => void) | null = null;

  constructor(topic: string, partition: number, seq: number) {
    this.topic = topic;
    this.partition = partition;
    this.seq = seq;
  }

  /** Adds one record's completion pair: (resolve, reject) of a send, or (group, index) of a sendBatch. */
  addSink(a: Resolve | SendGroup, b: Reject | number): void {
    if (a instanceof SendGroup) a.setPartition(b as number, this.partition);
    this.sinks.push(a, b);
    this.count++;
  }

  /** Completes every message: record i was stored at `baseOffset + i` (-1 when unknown). */
  complete(baseOffset: number): void {
    if (this.settled) return;
    const sinks = this.sinks;
    const partition = this.partition;
    for (let i = 0, offset = baseOffset; i < sinks.length; i += 2) {
      const sink = sinks[i];
      if (sink instanceof SendGroup) sink.ack(sinks[i + 1] as number, offset);
      else (sink as Resolve)({ partition, offset });
      if (baseOffset >= 0) offset++;
    }
    this.#settle();
  }

  fail(err: ConchError): void {
    if (this.settled) return;
    const sinks = this.sinks;
    for (let i = 0; i < sinks.length; i += 2) {
      const sink = sinks[i];
      if (sink instanceof SendGroup) sink.fail(err);
      else (sinks[i + 1] as Reject)(err);
    }
    this.#settle();
  }

  /** Resolves once the batch is completed or failed (made only when someone waits: flush). */
  whenSettled(): Promise<void> {
    if (this.settled) return Promise.resolve();
    this.#whenSettled ??= new Promise<void>((resolve) => {
      this.#onSettled = resolve;
    });
    return this.#whenSettled;
  }

  #settle(): void {
    this.settled = true;
    this.sinks.length = 0;
    this.records = EMPTY;
    this.#onSettled?.();
  }
}

const EMPTY = Buffer.alloc(0);
