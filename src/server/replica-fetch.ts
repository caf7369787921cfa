/**
 * ReplicaFetch (protocol/replica-fetch.ts): the leader's side of a follower's fetch stream, in
 * cluster mode (docs/cluster.md). Like a fetch stream (fetch-stream.ts) it pushes whole stored
 * batches within a credit window, but it reads past the high watermark up to the leader's local end
 * (the follower is what moves the high watermark), waits for that end to move rather than for the
 * high watermark, and turns the follower's credit into its log end: the bytes of each response are
 * credited once the follower has stored them, so the offset after the last response fully credited
 * is how far the follower's log reaches (ReplicaFeed.followerAt).
 *
 * Every round checks the role again: once this broker stops leading the partition, or the epoch
 * moves, the stream ends with NOT_LEADER or FENCED_LEADER_EPOCH and the follower looks again.
 */
import { AbortTarget, subscribe, unsubscribe } from "../broker/abort-fanout.js";
import type { ReplicaFeed } from "../broker/replication.js";
import { offsetAfter } from "../format/batch-header.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { releaseReadBuffer } from "../format/read-buffers.js";
import { JOIN_MAX_BYTES } from "../net/socket-writes.js";
import {
  decodeReplicaFetchRequest,
  type EpochStart,
  encodeReplicaFetchResponseHeader,
  NO_EPOCH,
  type ReplicaFetchRequest,
} from "../protocol/replica-fetch.js";
import type { DataWaiter } from "../storage/data-waiters.js";
import type { EpochEntry } from "../storage/leader-epochs.js";
import type { PartitionLog, ReadResult } from "../storage/partition-log.js";
import { authorize } from "./authorize.js";
import type { Reply, RequestContext } from "./handler.js";
import { ReplyTicket } from "./reply-ticket.js";
import type { OpenStream } from "./stream-host.js";
import { checkStreamRequest, streamEndReason } from "./stream-rules.js";

/** ReplicaFetch: opens the stream; its ticket stays in flight until the stream ends. */
export function replicaFetch(ctx: RequestContext, frame: Buffer, correlationId: number): ReplyTicket {
  const req = decodeReplicaFetchRequest(frame);
  // Replication is the brokers' own business: alter on the cluster, as Kafka's ClusterAction.
  authorize(ctx, "alter", "cluster", "cluster");
  const feed = ctx.broker.replication;
  if (feed === null) {
    throw new ConchError(ErrorCode.NOT_LEADER, "this broker runs on its own: it has no followers");
  }
  checkStreamRequest(ctx, correlationId, "replica fetch", req);
  req.maxBytes = Math.min(req.maxBytes, ctx.limits.maxFetchBytes);
  const stream = new ReplicaStream(ctx, correlationId, req, feed);
  stream.start();
  return stream.ticket;
}

class ReplicaStream extends AbortTarget implements OpenStream, DataWaiter {
  readonly ticket: ReplyTicket;
  readonly #ctx: RequestContext;
  readonly #id: number;
  readonly #req: ReplicaFetchRequest;
  readonly #feed: ReplicaFeed;
  #log: PartitionLog | null = null;
  /** The next offset to send. */
  #offset: number;
  /** Record bytes sent and not credited back. */
  #unacked = 0;
  /** Bytes sent and credited since the stream opened, and per response sent: its bytes end and offset end. */
  #sentBytes = 0;
  #creditedBytes = 0;
  readonly #sentEnds: number[] = [];
  readonly #sentOffsets: number[] = [];
  #reading = false;
  #waitingForRoom = false;
  #ended = false;
  waitOffset = 0;
  waitDeadline = 0;
  waitSlot = -1;

  constructor(ctx: RequestContext, id: number, req: ReplicaFetchRequest, feed: ReplicaFeed) {
    super();
    this.#ctx = ctx;
    this.#id = id;
    this.#req = req;
    this.#feed = feed;
    this.#offset = req.fetchOffset;
    this.ticket = new ReplyTicket(ctx.tickets, id);
  }

  start(): void {
    this.#ctx.streams.streams.set(this.#id, this);
    subscribe(this.#ctx.signal, this);
    const req = this.#req;
    try {
      const log = this.#checkRole();
      if (req.fetchOffset < log.logStartOffset) {
        // Retention took what the follower lacks: it starts its log again at this one's start.
        this.#divergence(log, NO_EPOCH, log.logStartOffset);
        return;
      }
      if (this.#diverged(log)) return;
      // Only now is the fetch offset a log end this log shares: a parted follower's is not.
      this.#feed.followerAt(req.topic, req.partition, req.replicaId, req.currentLeaderEpoch, req.fetchOffset);
    } catch (err) {
      this.#end(err);
      return;
    }
    this.#arm();
  }

  credit(bytes: number): void {
    this.#unacked = Math.max(0, this.#unacked - bytes);
    this.#creditedBytes += bytes;
    const ends = this.#sentEnds;
    let leo = -1;
    let n = 0;
    while (n < ends.length && ends[n]! <= this.#creditedBytes) leo = this.#sentOffsets[n++]!;
    if (n > 0) {
      ends.splice(0, n);
      this.#sentOffsets.splice(0, n);
      const req = this.#req;
      this.#feed.followerAt(req.topic, req.partition, req.replicaId, req.currentLeaderEpoch, leo);
    }
    this.#arm();
  }

  cancel(): void {
    this.#end(null);
  }

  roomAvailable(): void {
    this.#waitingForRoom = false;
    this.#arm();
  }

  signalAborted(): void {
    this.#end(streamEndReason(this.#ctx));
  }

  /** The local end passed the offset, or the keep-alive deadline came: read, or say the stream lives. */
  waitEnded(): void {
    if (this.#ended) return;
    const log = this.#log!;
    if (this.#offset >= log.localEndOffset) this.#push(EMPTY_READ, log, this.#offset);
    this.#arm();
  }

  #checkRole(): PartitionLog {
    const req = this.#req;
    const log = this.#feed.leaderLog(req.topic, req.partition, req.currentLeaderEpoch);
    this.#log = log;
    return log;
  }

  /**
   * The follower's log parts from this one before its fetch offset (its last epoch ends earlier
   * here, or it is longer than this log): one response says where, and the stream ends.
   */
  #diverged(log: PartitionLog): boolean {
    const req = this.#req;
    const leo = log.logEndOffset;
    let epoch = NO_EPOCH;
    let end = leo;
    if (req.lastFetchedEpoch !== NO_EPOCH) {
      const found = log.epochs.endOf(req.lastFetchedEpoch, leo);
      if (found.epoch === req.lastFetchedEpoch && found.endOffset >= req.fetchOffset) return false;
      if (found.epoch >= 0) {
        epoch = found.epoch;
        end = found.endOffset;
      } else end = log.logStartOffset;
    } else if (req.fetchOffset <= leo) return false;
    this.#divergence(log, epoch, Math.min(end, req.fetchOffset));
    return true;
  }

  /** The one response that tells the follower where to cut (or start) its log; the stream ends. */
  #divergence(log: PartitionLog, epoch: number, endOffset: number): void {
    const req = this.#req;
    const header = encodeReplicaFetchResponseHeader(
      this.#id,
      {
        leaderEpoch: req.currentLeaderEpoch,
        highWatermark: log.highWatermark,
        logStartOffset: log.logStartOffset,
        diverging: true,
        divergingEpoch: epoch,
        divergingEndOffset: endOffset,
        epochs: [],
      },
      0,
    );
    this.#ctx.streams.push(header);
    this.#end(null);
  }

  /** Starts the next read unless one is under way, or the window or the connection is full. */
  #arm(): void {
    if (this.#ended || this.#reading || this.#waitingForRoom) return;
    const room = this.#req.windowBytes - this.#unacked;
    let log: PartitionLog;
    try {
      log = this.#checkRole();
    } catch (err) {
      this.#end(err);
      return;
    }
    if (room <= 0 || this.#offset >= log.localEndOffset) {
      // Parked on the local end (or, with the window full, on nothing that comes before the deadline).
      this.waitOffset = room <= 0 ? Number.MAX_SAFE_INTEGER : this.#offset;
      this.waitDeadline = performance.now() + this.#req.maxWaitMs;
      if (log.parkReplica(this)) return;
      if (room <= 0) return;
    }
    this.#reading = true;
    const offset = this.#offset;
    const maxBytes = Math.min(this.#req.maxBytes, room, this.#ctx.streams.fetchBytes());
    log.readReplica(offset, maxBytes).then(
      (r) => this.#read(r, log, offset),
      (err: unknown) => {
        this.#reading = false;
        this.#end(err);
      },
    );
  }

  #read(r: ReadResult, log: PartitionLog, offset: number): void {
    this.#reading = false;
    if (this.#ended) {
      releaseReadBuffer(r.records);
      return;
    }
    const host = this.#ctx.streams;
    if (!host.hasRoom()) {
      // Read again once the connection drains; what was read is dropped.
      releaseReadBuffer(r.records);
      this.#waitingForRoom = true;
      host.waitForRoom(this);
      return;
    }
    if (r.records.length > 0) {
      const next = offsetAfter(r.records);
      if (next <= offset) {
        releaseReadBuffer(r.records);
        this.#end(new ConchError(ErrorCode.INTERNAL, `a read at ${offset} returned nothing at or after it`));
        return;
      }
      this.#push(r, log, next);
      this.#offset = next;
      this.#unacked += r.records.length;
      this.#sentBytes += r.records.length;
      this.#sentEnds.push(this.#sentBytes);
      this.#sentOffsets.push(next);
    }
    this.#arm();
  }

  #push(r: ReadResult, log: PartitionLog, next: number): void {
    const header = encodeReplicaFetchResponseHeader(
      this.#id,
      {
        leaderEpoch: this.#req.currentLeaderEpoch,
        highWatermark: log.highWatermark,
        logStartOffset: log.logStartOffset,
        diverging: false,
        divergingEpoch: NO_EPOCH,
        divergingEndOffset: 0,
        epochs: r.records.length === 0 ? [] : epochsCovering(log.epochs.entries, this.#offset, next),
      },
      r.records.length,
    );
    let reply: Reply;
    if (r.records.length === 0) reply = header;
    else if (r.records.length <= JOIN_MAX_BYTES) {
      reply = Buffer.concat([header, r.records]);
      releaseReadBuffer(r.records);
    } else reply = [header, r.records];
    this.#ctx.streams.push(reply);
  }

  #end(err: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#log?.unparkReplica(this);
    unsubscribe(this);
    this.#ctx.streams.streams.delete(this.#id);
    if (err === null) this.ticket.reply(null);
    else this.ticket.fail(err);
  }
}

const EMPTY_READ: ReadResult = { records: Buffer.alloc(0), highWatermark: 0, logStartOffset: 0 };

/** The entries whose epochs wrote offsets [from, to): the one holding `from`, and any starting later. */
function epochsCovering(entries: readonly EpochEntry[], from: number, to: number): EpochStart[] {
  const out: EpochStart[] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const next = entries[i + 1];
    if (e.startOffset >= to) break;
    if (next !== undefined && next.startOffset <= from) continue;
    out.push({ epoch: e.epoch, startOffset: e.startOffset });
  }
  return out;
}
