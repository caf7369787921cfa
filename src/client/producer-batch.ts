/**
 * One batch on its way to a partition, and the completions of the messages in it.
 *
 * A message costs no object of its own here: the batch keeps one flat `sinks` array of runs, three
 * slots each — `(resolve, reject, 1)` for a `send()`, `(group, first index, n)` for n consecutive
 * messages of one `sendBatch()` call — and the broker's base offset is enough to complete all of
 * them: record i of the batch gets base + i. A `sendBatch` of any size that lands in one batch is
 * one run, so its messages cost nothing per message here.
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

/** A message's offset (f64) and partition (u32) in a `SendBatchResult`. */
const RESULT_BYTES_PER_MESSAGE = 12;
/** Results up to this size are carved from a shared slab; larger ones get memory of their own. */
const SHARED_RESULT_BYTES = 8 << 10;
const RESULT_SLAB_BYTES = 64 << 10;
let slab = new ArrayBuffer(RESULT_SLAB_BYTES);
let slabUsed = 0;

/**
 * Memory for the result of a `sendBatch` of `count` messages. Allocating two typed arrays for
 * every call (each its own zeroed memory outside the heap) cost as much as encoding the call's
 * records; carving both from a shared slab, as Node's Buffer pool does, costs two small views.
 * Every slot is written before the result is handed out, so nothing shows from earlier calls. A
 * result kept by the application keeps its slab alive (64 KiB at most).
 */
function resultArrays(count: number): SendBatchResult {
  const bytes = count * RESULT_BYTES_PER_MESSAGE;
  if (bytes > SHARED_RESULT_BYTES) {
    const own = new ArrayBuffer(bytes);
    return { offsets: new Float64Array(own, 0, count), partitions: new Uint32Array(own, count * 8, count) };
  }
  if (slabUsed + bytes > RESULT_SLAB_BYTES) {
    slab = new ArrayBuffer(RESULT_SLAB_BYTES);
    slabUsed = 0;
  }
  const at = slabUsed;
  slabUsed = (at + bytes + 7) & ~7;
  return {
    offsets: new Float64Array(slab, at, count),
    partitions: new Uint32Array(slab, at + count * 8, count),
  };
}

/**
 * The completion of one `sendBatch` call, shared by all its messages whatever batches they land in.
 * A one-message call (a common way to pipeline, and many may wait at once for an fsync) keeps its
 * partition and offset in two fields and makes its result arrays only when it resolves, so what
 * waits is one small object.
 */
export class SendGroup {
  /** The result, filled in as messages are acknowledged; made at the end for a one-message call. */
  #result: SendBatchResult | null = null;
  #partition0 = 0;
  #offset0 = 0;
  #remaining: number;
  #resolve: (value: SendBatchResult) => void;
  #reject: Reject;
  #failed = false;

  constructor(count: number, resolve: (value: SendBatchResult) => void, reject: Reject) {
    if (count !== 1) this.#result = resultArrays(count);
    this.#remaining = count;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /**
   * Messages `first` .. `first + n - 1` were stored in `partition` from `offset` on (every one at -1
   * when the offset is unknown, with acks = "none").
   */
  ack(first: number, n: number, partition: number, offset: number): void {
    const result = this.#result;
    if (result === null) {
      this.#partition0 = partition;
      this.#offset0 = offset;
    } else {
      result.partitions.fill(partition, first, first + n);
      const offsets = result.offsets;
      if (offset < 0) offsets.fill(-1, first, first + n);
      else for (let i = 0; i < n; i++) offsets[first + i] = offset + i;
    }
    this.#remaining -= n;
    if (this.#remaining === 0 && !this.#failed) this.#resolve(this.result());
  }

  /** Where each message went (complete once every message is acknowledged). */
  result(): SendBatchResult {
    if (this.#result !== null) return this.#result;
    const result = resultArrays(1);
    result.partitions[0] = this.#partition0;
    result.offsets[0] = this.#offset0;
    return result;
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
  /** Three slots per run of records; see the file comment. */
  readonly sinks: Array<Resolve | Reject | SendGroup | number> = [];
  /** Sends so far (1 after the first). */
  attempts = 0;
  /**
   * When the batch fails if not acknowledged (monotonic ms): deliveryTimeoutMs after the send()
   * of its oldest message.
   */
  deadline = Number.POSITIVE_INFINITY;
  /** A request carries it now: its slot and memory are freed when that request ends. */
  inFlight = false;
  /** Why its last attempt failed, for the delivery timeout's message. */
  lastError: ConchError | null = null;
  settled = false;
  /** Its index in the accumulator's list of unsettled batches (-1: in none). */
  listSlot = -1;
  #whenSettled: Promise<void> | null = null;
  #onSettled: (() => void) | null = null;

  constructor(topic: string, partition: number, seq: number) {
    this.topic = topic;
    this.partition = partition;
    this.seq = seq;
  }

  /**
   * Adds one record's completion: (resolve, reject) of a send, or (group, index) of a sendBatch,
   * which extends the last run when it is the next message of the same group.
   */
  addSink(a: Resolve | SendGroup, b: Reject | number): void {
    const sinks = this.sinks;
    const last = sinks.length - 3;
    this.count++;
    if (
      last >= 0 &&
      sinks[last] === a &&
      typeof b === "number" &&
      (sinks[last + 1] as number) + (sinks[last + 2] as number) === b
    ) {
      sinks[last + 2] = (sinks[last + 2] as number) + 1;
      return;
    }
    sinks.push(a, b, 1);
  }

  /** Completes every message: record i was stored at `baseOffset + i` (-1 when unknown). */
  complete(baseOffset: number): void {
    if (this.settled) return;
    const sinks = this.sinks;
    const partition = this.partition;
    for (let i = 0, offset = baseOffset; i < sinks.length; i += 3) {
      const sink = sinks[i];
      const n = sinks[i + 2] as number;
      if (sink instanceof SendGroup) sink.ack(sinks[i + 1] as number, n, partition, offset);
      else (sink as Resolve)({ partition, offset });
      if (baseOffset >= 0) offset += n;
    }
    this.#settle();
  }

  fail(err: ConchError): void {
    if (this.settled) return;
    const sinks = this.sinks;
    for (let i = 0; i < sinks.length; i += 3) {
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
