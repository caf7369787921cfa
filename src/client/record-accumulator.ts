/**
 * Collects records into one batch per partition and decides when each batch goes out.
 *
 * A partition's open batch is sealed when it reaches `batchBytes`, or once it is *due* — its linger
 * time has passed, `flush()` was called, or sends are waiting for buffer memory — and the partition
 * has a free in-flight slot. So while `maxInFlight` batches are on the wire, new records keep
 * joining the open batch: batches grow by themselves exactly when the broker is the bottleneck.
 *
 * Linger uses one shared timer (or, for lingerMs = 0, one microtask), not one per batch: when it
 * fires every open batch becomes due, so a record waits at most `lingerMs` before it may be sent.
 *
 * Memory: every record's encoded bytes are counted from append until its batch settles; the
 * producer asks `hasRoom()` before appending and parks the message otherwise. Batches are encoded
 * into buffers from one adaptive pool (format/encode-buffer-pool.ts); a settled batch's buffer goes
 * back to it, unless `recycleBuffers` is off (acks = none: nothing tells when the bytes have left).
 */

import { BatchBuilder } from "../format/batch-builder.js";
import { batchCount } from "../format/batch-header.js";
import type { CodecId } from "../format/codecs/index.js";
import { compressBatch } from "../format/compressed-batch.js";
import { EncodeBufferPool } from "../format/encode-buffer-pool.js";
import { BATCH_RECORDS_AT } from "../format/layout.js";
import { sequenceAfter, stampProducerFields } from "../format/producer-fields.js";
import type { RecordHeaders } from "../format/record-headers.js";
import { microtask } from "../net/microtask.js";
import { DEFAULT_MAX_BATCH_BYTES } from "../protocol/api.js";
import { ProducerBatch, type Reject, type Resolve, type SendGroup } from "./producer-batch.js";
import { SlotList } from "./slot-list.js";

export interface AccumulatorOptions {
  batchBytes: number;
  lingerMs: number;
  bufferBytes: number;
  maxInFlight: number;
  /** A batch's deadline is this long after it opens (see `expire`). Default: none. */
  deliveryTimeoutMs?: number;
  /** Give a settled batch's buffer back for reuse. Default true; false with acks = none. */
  recycleBuffers?: boolean;
  /** Compress each sealed batch with this codec. Default 0, none. */
  compression?: CodecId;
  /**
   * Idempotent producer: nothing is sent until `setProducer` gives the producer id, and each batch
   * gets its partition's next sequence numbers when it is first sent. `needProducerId` is called
   * while batches wait for the id.
   */
  idempotent?: { needProducerId: () => void };
}

/**
 * Sends one sealed batch. It must not settle the batch or call back into the accumulator
 * synchronously: completion comes later through `done()` or `retry()`.
 */
export type BatchSender = (batch: ProducerBatch) => void;

/** Partition numbers below this are kept in a dense array; higher ones (refused by any broker) are not. */
const DENSE_PARTITIONS = 1 << 16;

class PartitionQueue {
  readonly topic: string;
  readonly partition: number;
  builder: BatchBuilder | null = null;
  open: ProducerBatch | null = null;
  /** Sealed batches waiting for an in-flight slot, in seq order. */
  ready: ProducerBatch[] = [];
  inFlight = 0;
  due = false;
  /** While a retry backs off nothing is sent (monotonic ms; 0 = not paused), so order holds. */
  pausedUntil = 0;
  /**
   * A batch came back for a retry: nothing is sent until every batch in flight has come back too
   * (stored, or failed and put back in its place), so the retries go out in their original order
   * whatever order the failures were reported in, and no newer batch overtakes them.
   */
  retrying = false;
  nextSeq = 0;
  /** Idempotence: the sequence number of the next batch's first record sent to the partition. */
  nextSequence = 0;
  /** Its index in the accumulator's active list (-1: not active). */
  listSlot = -1;

  constructor(topic: string, partition: number) {
    this.topic = topic;
    this.partition = partition;
  }

  get idle(): boolean {
    return this.open === null && this.ready.length === 0 && this.inFlight === 0;
  }
}

/** Batches up to this size are copied out of their encode buffer when sealed (see #seal). */
const SMALL_BATCH_BYTES = 2048;

export class RecordAccumulator {
  #batchBytes: number;
  #lingerMs: number;
  #bufferBytes: number;
  #maxInFlight: number;
  #deliveryTimeoutMs: number;
  #maxBatchBytes = DEFAULT_MAX_BATCH_BYTES;
  #send: BatchSender;
  /**
   * Each topic's queues by partition number: an array kept dense (grown with undefined up to a new
   * partition), as a Map of 10,000 partitions cost a hash lookup per record.
   */
  #queues = new Map<string, Array<PartitionQueue | undefined>>();
  /** The queue found last: consecutive records mostly go to the same partition. */
  #lastQueue: PartitionQueue | null = null;
  /** Queues with an open, ready or in-flight batch. */
  #active = new SlotList<PartitionQueue>();
  #unsettled = new SlotList<ProducerBatch>();
  #usedBytes = 0;
  #pressure = false;
  #lingerArmed = false;
  #retryTimer: NodeJS.Timeout | null = null;
  #retryAt = 0;
  #onRoom: () => void = noop;
  readonly #pool: EncodeBufferPool;
  readonly #recycle: boolean;
  readonly #compression: CodecId;
  readonly #idempotent: { needProducerId: () => void } | null;
  /** The idempotent producer's id (-1 until known) and epoch. */
  #producerId = -1;
  #producerEpoch = 0;

  constructor(options: AccumulatorOptions, send: BatchSender) {
    this.#batchBytes = options.batchBytes;
    this.#lingerMs = options.lingerMs;
    this.#bufferBytes = options.bufferBytes;
    this.#maxInFlight = options.maxInFlight;
    this.#deliveryTimeoutMs = options.deliveryTimeoutMs ?? Number.POSITIVE_INFINITY;
    this.#recycle = options.recycleBuffers ?? true;
    this.#compression = options.compression ?? 0;
    this.#idempotent = options.idempotent ?? null;
    // Free encode buffers up to a quarter of the buffer memory are kept: a send spread over many
    // partitions opens a batch, and takes a buffer, for each.
    // Buffers start at 1 KiB (a batch that needs more grows them at once): a send over many
    // partitions has a batch open for each, most of a record or two.
    this.#pool = new EncodeBufferPool({
      initialBytes: 1024,
      maxFreeBytes: Math.floor(options.bufferBytes / 4),
    });
    this.#send = send;
  }

  /** Bytes of records appended and not yet settled. */
  get usedBytes(): number {
    return this.#usedBytes;
  }

  /** Batches not yet settled (open, waiting, in flight). */
  get unsettledBatches(): number {
    return this.#unsettled.size;
  }

  /** The broker's limit, learned from the handshake; batches are sealed below it. */
  set maxBatchBytes(n: number) {
    this.#maxBatchBytes = n;
  }

  get maxBatchBytes(): number {
    return this.#maxBatchBytes;
  }

  /**
   * While true (sends are waiting for memory) every open batch is due, so memory frees as fast as
   * the broker allows.
   */
  set pressure(on: boolean) {
    if (on === this.#pressure) return;
    this.#pressure = on;
    if (on) this.#drainAll();
  }

  /** Called whenever memory is released. */
  set onRoom(listener: () => void) {
    this.#onRoom = listener;
  }

  /** Whether a record of `bytes` fits in buffer memory now (one record always fits an empty buffer). */
  hasRoom(bytes: number): boolean {
    return this.#usedBytes === 0 || this.#usedBytes + bytes <= this.#bufferBytes;
  }

  /**
   * Whether nothing of `topic` waits to be sent: no open, waiting or retrying batch. Batches
   * already handed to the sender are on their way ahead of anything sent after this.
   */
  quietFor(topic: string): boolean {
    const active = this.#active.items;
    for (let i = 0; i < active.length; i++) {
      const q = active[i]!;
      if (q.topic === topic && (q.open !== null || q.ready.length > 0 || q.retrying)) return false;
    }
    return true;
  }

  /** Bytes of buffer memory a send may take now (any size while nothing is buffered). */
  get room(): number {
    return this.#usedBytes === 0 ? Number.POSITIVE_INFINITY : this.#bufferBytes - this.#usedBytes;
  }

  /** Counts `bytes` sent outside the accumulator (a spread send) against buffer memory. */
  reserve(bytes: number): void {
    this.#usedBytes += bytes;
  }

  /** Gives back what `reserve` counted. */
  unreserve(bytes: number): void {
    this.#usedBytes -= bytes;
    this.#onRoom();
  }

  /** Whether a record of `bytes` (header included) fits in a batch on its own. */
  fitsInBatch(bytes: number): boolean {
    return BATCH_RECORDS_AT + bytes <= this.#maxBatchBytes;
  }

  /** Whether a record of `bytes` would not fit the partition's open batch (and so would start a new one). */
  wouldSeal(topic: string, partition: number, bytes: number): boolean {
    const q = this.#queues.get(topic)?.[partition];
    if (q === undefined || q.open === null) return false;
    return q.builder!.sizeBytes + bytes > Math.min(this.#batchBytes, this.#maxBatchBytes);
  }

  /**
   * Appends one record of `bytes` encoded bytes (header, key, value and headers block) with its
   * completion pair (see ProducerBatch) and returns the batch it went into.
   */
  append(
    topic: string,
    partition: number,
    value: Uint8Array | string | null,
    key: Uint8Array | string | null,
    timestampMs: number | undefined,
    bytes: number,
    sinkA: Resolve | SendGroup,
    sinkB: Reject | number,
    headers: RecordHeaders | null = null,
  ): ProducerBatch {
    const q = this.#queue(topic, partition);
    const limit = Math.min(this.#batchBytes, this.#maxBatchBytes);
    let sealed = false;
    if (q.open !== null && q.builder!.sizeBytes + bytes > limit) {
      this.#seal(q, true);
      sealed = true;
    }
    const batch = q.open ?? this.#openBatch(q);
    const builder = q.builder!;
    builder.add(value, key, timestampMs, headers);
    batch.addSink(sinkA, sinkB);
    batch.bytes += bytes;
    this.#usedBytes += bytes;
    if (builder.sizeBytes >= limit) {
      this.#seal(q, true);
      sealed = true;
    }
    if (sealed) this.#drain(q);
    return batch;
  }

  /** The idempotent producer's id is known: batches waiting for it go. */
  setProducer(producerId: number, epoch: number): void {
    this.#producerId = producerId;
    this.#producerEpoch = epoch;
    this.#drainAll();
  }

  /** Makes every open batch due now (flush). */
  sealAll(): void {
    for (const q of this.#active.items) if (q.open !== null) q.due = true;
    this.#drainAll();
  }

  /** Every batch not yet settled, for flush() to wait on. */
  unsettled(): ProducerBatch[] {
    return [...this.#unsettled.items];
  }

  /** A sent batch is settled (completed or failed for good): frees its slot and its memory. */
  done(batch: ProducerBatch): void {
    const q = this.#queue(batch.topic, batch.partition);
    q.inFlight--;
    batch.inFlight = false;
    this.#release(batch);
    this.#drain(q);
    this.#onRoom();
  }

  /**
   * A sent batch goes back to its place (by seq) at the front of its partition, which sends nothing
   * until its other batches in flight have come back, then pauses `delayMs` before sending again.
   */
  retry(batch: ProducerBatch, delayMs: number): void {
    const q = this.#queue(batch.topic, batch.partition);
    q.inFlight--;
    batch.inFlight = false;
    let i = q.ready.length;
    while (i > 0 && q.ready[i - 1]!.seq > batch.seq) i--;
    q.ready.splice(i, 0, batch);
    q.retrying = true;
    this.#active.add(q);
    if (delayMs > 0) {
      const at = performance.now() + delayMs;
      if (at > q.pausedUntil) q.pausedUntil = at;
    }
    this.#drain(q);
  }

  /**
   * Fails, with `error(batch)`, every batch whose deadline is at or before `now`: an open or waiting
   * one leaves its partition at once; one in flight has its messages failed now and frees its slot
   * and memory when its request ends (it is not sent again). Returns the earliest deadline left
   * (Infinity: none).
   */
  expire(now: number, error: (batch: ProducerBatch) => Parameters<Reject>[0]): number {
    let next = Number.POSITIVE_INFINITY;
    const batches = this.#unsettled.items;
    let released = false;
    // From the end: releasing the current batch moves the last one, already seen, into its slot.
    for (let i = batches.length - 1; i >= 0; i--) {
      const batch = batches[i]!;
      if (batch.settled) continue;
      if (batch.deadline > now) {
        if (batch.deadline < next) next = batch.deadline;
        continue;
      }
      if (batch.inFlight) {
        batch.fail(error(batch));
        continue;
      }
      const q = this.#queue(batch.topic, batch.partition);
      if (q.open === batch) this.#seal(q, false);
      else q.ready.splice(q.ready.indexOf(batch), 1);
      batch.fail(error(batch));
      this.#release(batch);
      released = true;
    }
    if (released) this.#onRoom();
    return next;
  }

  /** Fails every batch not yet sent (producer closing); in-flight batches settle on their own. */
  failUnsent(err: Parameters<Reject>[0]): void {
    // From the end: deleting the current queue moves the last one, already done, into its slot.
    const active = this.#active.items;
    for (let i = active.length - 1; i >= 0; i--) {
      const q = active[i]!;
      const waiting = q.ready;
      q.ready = [];
      if (q.open !== null) waiting.push(this.#seal(q, false));
      for (const batch of waiting) {
        batch.fail(err);
        this.#release(batch);
      }
      if (q.idle) this.#active.delete(q);
    }
    this.#onRoom();
  }

  /** Stops the timers; batches are left as they are. */
  stop(): void {
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
  }

  #queue(topic: string, partition: number): PartitionQueue {
    const last = this.#lastQueue;
    if (last !== null && last.partition === partition && last.topic === topic) return last;
    let byPartition = this.#queues.get(topic);
    if (byPartition === undefined) this.#queues.set(topic, (byPartition = []));
    let q = byPartition[partition];
    if (q === undefined) {
      q = new PartitionQueue(topic, partition);
      // Grown without holes, as an index far past the end turns the array into a dictionary; but
      // only so far: a send may name any partition up to 2^32 - 1 (the broker refuses it).
      if (partition < DENSE_PARTITIONS) while (byPartition.length < partition) byPartition.push(undefined);
      byPartition[partition] = q;
    }
    this.#lastQueue = q;
    return q;
  }

  #openBatch(q: PartitionQueue): ProducerBatch {
    q.builder ??= new BatchBuilder({ pool: this.#pool });
    const batch = new ProducerBatch(q.topic, q.partition, q.nextSeq++);
    batch.deadline = performance.now() + this.#deliveryTimeoutMs;
    // The batch's own header counts against memory as well as its records.
    batch.bytes = BATCH_RECORDS_AT;
    this.#usedBytes += BATCH_RECORDS_AT;
    q.open = batch;
    this.#active.add(q);
    this.#unsettled.add(batch);
    this.#armLinger();
    return batch;
  }

  /** Seals the open batch; `forSize` ones join the ready list, others are returned to send now. */
  #seal(q: PartitionQueue, forSize: boolean): ProducerBatch {
    const batch = q.open!;
    const records = q.builder!.finish();
    if (this.#compression === 0 && records.length > SMALL_BATCH_BYTES) {
      batch.records = records;
      batch.encoded = records;
    } else if (this.#compression === 0) {
      // A small batch is copied out (a slice of Node's shared slab, no allocation of its own) and
      // its encode buffer goes back at once: a send over 1,000 partitions seals 1,000 batches of
      // a record or two, and with 4 sends in flight would otherwise hold 4,000 encode buffers,
      // most of them allocated and first touched anew for each send.
      batch.records = Buffer.from(records);
      batch.encoded = null;
      this.#pool.release(records);
    } else {
      // The compressed copy is not the pool's: the encoded records go back to the pool at once.
      batch.records = compressBatch(records, this.#compression);
      batch.encoded = null;
      this.#pool.release(records);
    }
    batch.sealed = true;
    q.open = null;
    q.due = false;
    if (forSize) q.ready.push(batch);
    return batch;
  }

  #release(batch: ProducerBatch): void {
    this.#usedBytes -= batch.bytes;
    batch.bytes = 0;
    this.#unsettled.delete(batch);
    const encoded = batch.encoded;
    batch.encoded = null;
    if (encoded !== null && this.#recycle) this.#pool.release(encoded);
    const q = this.#queue(batch.topic, batch.partition);
    if (q.idle) {
      this.#active.delete(q);
      // A quiet partition holds no encode buffer.
      q.builder?.detach();
    }
  }

  #drainAll(): void {
    // Draining sends, and a send never settles a batch synchronously: no queue leaves meanwhile.
    const active = this.#active.items;
    for (let i = 0; i < active.length; i++) this.#drain(active[i]!);
  }

  #drain(q: PartitionQueue): void {
    if (this.#idempotent !== null && this.#producerId < 0) {
      if (q.ready.length > 0 || (q.open !== null && (q.due || this.#pressure)))
        this.#idempotent.needProducerId();
      return;
    }
    if (q.retrying) {
      if (q.inFlight > 0) return;
      q.retrying = false;
    }
    while (q.inFlight < this.#maxInFlight) {
      if (q.pausedUntil !== 0) {
        if (performance.now() < q.pausedUntil) {
          this.#armRetry(q.pausedUntil);
          return;
        }
        q.pausedUntil = 0;
      }
      let batch = q.ready.shift();
      if (batch === undefined) {
        if (q.open === null || !(q.due || this.#pressure)) return;
        batch = this.#seal(q, false);
      }
      q.inFlight++;
      batch.inFlight = true;
      if (batch.attempts++ === 0 && this.#idempotent !== null) this.#number(q, batch);
      this.#send(batch);
    }
  }

  /**
   * Gives a batch its first send's sequence numbers: first sends go out in seq order, so the
   * partition's sequences follow the batches' order, and a retry sends the same bytes again.
   */
  #number(q: PartitionQueue, batch: ProducerBatch): void {
    const records = batch.records;
    stampProducerFields(records, 0, records.length, this.#producerId, this.#producerEpoch, q.nextSequence);
    q.nextSequence = sequenceAfter(q.nextSequence, batchCount(records, 0));
  }

  #armLinger(): void {
    if (this.#lingerArmed) return;
    this.#lingerArmed = true;
    if (this.#lingerMs <= 0) microtask(this.#lingerExpired);
    else setTimeout(this.#lingerExpired, this.#lingerMs);
  }

  #lingerExpired = (): void => {
    this.#lingerArmed = false;
    this.sealAll();
  };

  #armRetry(at: number): void {
    if (this.#retryTimer !== null && this.#retryAt <= at) return;
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#retryAt = at;
    this.#retryTimer = setTimeout(
      () => {
        this.#retryTimer = null;
        this.#drainAll();
      },
      Math.max(1, Math.ceil(at - performance.now())),
    );
  }
}

function noop(): void {}
