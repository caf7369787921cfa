/**
 * A follower's side of one partition's replication (docs/cluster.md): a ReplicaFetch stream to the
 * leader, whose batches are stored as they are (PartitionLog.appendReplicatedTo, the leader's
 * offsets kept) and credited back once stored, which is how the leader learns this replica's log
 * end. A response that says the logs parted makes the fetcher truncate to the epoch boundary and
 * open a new stream; a stream that fails (the leader moved, the connection dropped) is opened
 * again after a pause, until the fetcher is stopped (a new role).
 */
import type { Logger } from "pino";
import { Connection, type ConnectionOptions } from "../client/connection.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import { encodeStreamCredit } from "../protocol/fetch-stream.js";
import {
  decodeReplicaFetchResponse,
  encodeReplicaFetchRequest,
  NO_EPOCH,
  type ReplicaFetchRequest,
  type ReplicaFetchResponse,
} from "../protocol/replica-fetch.js";
import type { AppendListener, AppendResult, PartitionLog } from "../storage/partition-log.js";
import type { BrokerEndpoint } from "./roles.js";

/** The first pause before a failed stream is opened again; it doubles up to `retryMs`. */
const FIRST_RETRY_MS = 10;

export interface FetcherOptions {
  topic: string;
  partition: number;
  /** This broker's id, sent as replicaId. */
  replicaId: number;
  leaderEpoch: number;
  leader: BrokerEndpoint;
  log: PartitionLog;
  connection: ConnectionOptions;
  /** Record bytes in one response, and ahead of this replica's credit. */
  maxBytes: number;
  windowBytes: number;
  /** How often an idle leader says it is alive (and what its high watermark is). */
  maxWaitMs: number;
  /** Longest pause before opening a failed stream again (the first is 10 ms, doubling). */
  retryMs: number;
  logger: Logger | undefined;
}

export class ReplicaFetcher implements AppendListener {
  readonly #o: FetcherOptions;
  readonly #stop = new AbortController();
  #conn: Connection | null = null;
  #streamId = 0;
  /** Bumped per stream: responses of an earlier stream are dropped. */
  #generation = 0;
  /** Responses that wait for an epoch entry to reach the disk before their records are stored. */
  #queue: Promise<void> | null = null;
  /**
   * Appends under way, in order (they complete in order): each one's record bytes and the stream
   * generation they came on. Only the current stream's are credited: credit on a later stream for
   * an earlier one's bytes would tell its leader of records this log may not hold.
   */
  readonly #pendingBytes: number[] = [];
  readonly #pendingGenerations: number[] = [];
  #retryTimer: NodeJS.Timeout | null = null;
  #stopped = false;
  /** Whether the leader has answered yet (logged once: when a new follower starts to count). */
  #heard = false;
  /** The next pause before a failed stream is opened again; back to the first once one answers. */
  #retryWaitMs: number;

  constructor(options: FetcherOptions) {
    this.#o = options;
    this.#retryWaitMs = Math.min(FIRST_RETRY_MS, options.retryMs);
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  start(): void {
    void this.#open();
  }

  /** Stops fetching: the stream is cancelled and the connection closed; nothing more is stored. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#stop.abort();
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#conn?.close();
    this.#conn = null;
  }

  async #open(): Promise<void> {
    if (this.#stopped) return;
    const o = this.#o;
    try {
      if (this.#conn === null || this.#conn.closed) {
        const address = { host: o.leader.host, port: o.leader.port };
        this.#conn = await Connection.open(address, o.connection, this.#stop.signal);
        if (this.#stopped) {
          this.#conn.close();
          return;
        }
      }
      const log = o.log;
      // The fetch offset tells the leader what this log holds: appends still on their way must
      // have reached it first (a restart of the stream is rare; this waits for one fsync).
      if (log.localEndOffset !== log.logEndOffset) await log.flush();
      if (this.#stopped) return;
      const generation = ++this.#generation;
      const leo = log.logEndOffset;
      const lastEpoch = leo > log.logStartOffset ? log.epochs.epochAt(leo - 1) : -1;
      const req: ReplicaFetchRequest = {
        topic: o.topic,
        partition: o.partition,
        replicaId: o.replicaId,
        currentLeaderEpoch: o.leaderEpoch,
        fetchOffset: leo,
        lastFetchedEpoch: lastEpoch < 0 ? NO_EPOCH : lastEpoch,
        maxBytes: o.maxBytes,
        maxWaitMs: o.maxWaitMs,
        windowBytes: o.windowBytes,
      };
      this.#streamId = this.#conn.streamTo(
        encodeReplicaFetchRequest,
        req,
        decodeReplicaFetchResponse,
        this.#streamed,
        generation,
        { signal: this.#stop.signal, extraWaitMs: o.maxWaitMs },
      );
    } catch (err) {
      this.#failed(err);
    }
  }

  readonly #streamed = {
    responded: (res: ReplicaFetchResponse, generation: number): void => {
      if (generation !== this.#generation || this.#stopped) return;
      try {
        this.#received(res);
      } catch (err) {
        this.#restart(err);
      }
    },
    requestFailed: (err: ConchError, generation: number): void => {
      if (generation === this.#generation) this.#failed(err);
    },
  };

  #received(res: ReplicaFetchResponse): void {
    const log = this.#o.log;
    this.#retryWaitMs = Math.min(FIRST_RETRY_MS, this.#o.retryMs);
    if (!this.#heard) {
      this.#heard = true;
      this.#o.logger?.info(
        {
          topic: this.#o.topic,
          partition: this.#o.partition,
          epoch: this.#o.leaderEpoch,
          leaderId: this.#o.leader.id,
        },
        "replica stream answered by the leader",
      );
    }
    if (res.diverging) {
      this.#diverged(res);
      return;
    }
    // A follower's high watermark: the leader's, as far as its own log reaches (the log takes the min).
    log.setVisibilityCeiling(res.highWatermark);
    if (res.records.length === 0) return;
    const newEpochs = res.epochs.filter((e) => e.epoch > log.epochs.latestEpoch);
    if (newEpochs.length === 0 && this.#queue === null) {
      this.#store(res.records);
      return;
    }
    // The epoch entries reach the disk before the records they cover (recovery drops entries past
    // the log end, never the other way round). Later responses wait their turn.
    const records = Buffer.from(res.records);
    const generation = this.#generation;
    const previous = this.#queue ?? Promise.resolve();
    const queued = previous
      .then(async () => {
        for (const e of newEpochs) {
          if (e.epoch > log.epochs.latestEpoch) {
            await log.epochs.assign(
              e.epoch,
              Math.max(e.startOffset, log.epochs.entries.at(-1)?.startOffset ?? 0),
            );
          }
        }
        if (generation === this.#generation && !this.#stopped) this.#store(records);
      })
      .catch((err: unknown) => this.#restart(err))
      .finally(() => {
        if (this.#queue === queued) this.#queue = null;
      });
    this.#queue = queued;
  }

  #store(records: Buffer): void {
    this.#o.log.appendReplicatedTo(records, this);
    this.#pendingBytes.push(records.length);
    this.#pendingGenerations.push(this.#generation);
  }

  appended(_result: AppendResult): void {
    const bytes = this.#pendingBytes.shift();
    const generation = this.#pendingGenerations.shift();
    const conn = this.#conn;
    if (bytes === undefined || generation !== this.#generation || conn === null || this.#stopped) return;
    conn.send(encodeStreamCredit, { streamId: this.#streamId, bytes });
  }

  appendFailed(err: Error): void {
    this.#pendingBytes.shift();
    this.#pendingGenerations.shift();
    this.#restart(err);
  }

  /**
   * The logs parted: cut this one back to where they agree and fetch from there; or the leader's
   * log starts after this one's end: empty this one and start it there.
   */
  #diverged(res: ReplicaFetchResponse): void {
    const log = this.#o.log;
    let target = res.divergingEndOffset;
    if (res.divergingEpoch !== NO_EPOCH) {
      const local = log.epochs.endOf(res.divergingEpoch, log.logEndOffset);
      if (local.epoch === res.divergingEpoch) target = Math.min(target, local.endOffset);
    }
    const generation = ++this.#generation;
    this.#o.logger?.warn(
      {
        topic: this.#o.topic,
        partition: this.#o.partition,
        logEndOffset: log.logEndOffset,
        truncateTo: target,
      },
      "follower's log parted from the leader's: truncating",
    );
    // Past this log's end: the leader no longer holds what lies between; start again at its start.
    const restart = res.divergingEndOffset > log.logEndOffset;
    const settled = this.#queue ?? Promise.resolve();
    void settled
      .then(async () => {
        if (restart) await log.restartAt(res.divergingEndOffset);
        else await log.truncateTo(target);
      })
      .then(
        () => {
          if (generation === this.#generation) void this.#open();
        },
        (err: unknown) => this.#failed(err),
      );
  }

  /** Something went wrong with what was received: end this stream and open another. */
  #restart(err: unknown): void {
    this.#generation++;
    this.#o.logger?.warn(
      { err, topic: this.#o.topic, partition: this.#o.partition },
      "replica fetch restarts",
    );
    this.#conn?.close(new ConchError(ErrorCode.CONNECTION_CLOSED, "replica fetch restarts"));
    this.#conn = null;
    this.#retry();
  }

  #failed(err: unknown): void {
    if (this.#stopped) return;
    this.#o.logger?.debug(
      { err, topic: this.#o.topic, partition: this.#o.partition },
      "replica fetch failed",
    );
    this.#retry();
  }

  #retry(): void {
    if (this.#stopped || this.#retryTimer !== null) return;
    // Doubling from a short first pause: after a failover the new leader usually refuses the
    // first stream only because it is still writing its epoch entry (a few ms), and every ms here
    // delays the high watermark, so acks=all, by as much.
    const wait = this.#retryWaitMs;
    this.#retryWaitMs = Math.min(this.#o.retryMs, wait * 2);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      void this.#open();
    }, wait);
  }
}
