/**
 * What cluster mode's replica manager (src/cluster/) offers the broker: a single-node broker has
 * none, and answers as it always did. With one, produce and consumer fetches reach only the
 * partition's leader, and a produce with acks "all" is answered once the high watermark (the end
 * every in-sync replica has, docs/cluster.md) passes its last offset.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { DataWaiter } from "../storage/data-waiters.js";
import type { AppendListener, AppendResult, PartitionLog } from "../storage/partition-log.js";

/** The leader's side of a follower's fetch stream (the ReplicaFetch request, server/replica-fetch.ts). */
export interface ReplicaFeed {
  /**
   * The log a follower of `leaderEpoch` fetches from: throws NOT_LEADER unless this broker leads the
   * partition, FENCED_LEADER_EPOCH when `leaderEpoch` is not the current one.
   */
  leaderLog(topic: string, partition: number, leaderEpoch: number): PartitionLog;
  /** Follower `replicaId` has stored everything before `logEndOffset` (its fetch offset, or its credit). */
  followerAt(
    topic: string,
    partition: number,
    replicaId: number,
    leaderEpoch: number,
    logEndOffset: number,
  ): void;
}

export interface PartitionReplication extends ReplicaFeed {
  /**
   * Throws NOT_LEADER unless this broker leads the partition now (and has not fenced itself), so
   * that clients find the leader; throws nothing for a partition cluster mode does not manage.
   */
  checkLeader(topic: string, partition: number): void;
  /** Throws NOT_ENOUGH_REPLICAS when the partition's ISR is below its min.insync.replicas. */
  checkInSync(topic: string, partition: number): void;
}

/** The longest an acks "all" produce waits for its replicas when the request names no timeout. */
export const ACKS_ALL_DEFAULT_TIMEOUT_MS = 30_000;

/**
 * One acks "all" produce: told of the leader's append, it parks on the log until the high
 * watermark passes the append's last offset, then tells the caller's listener; TIMEOUT when the
 * deadline passes first (the records are stored on the leader and may still be replicated: a
 * retry can duplicate them, as with any timeout). One object per request, none per message.
 */
export class AcksAllWait implements AppendListener, DataWaiter {
  waitOffset = 0;
  readonly waitDeadline: number;
  waitSlot = -1;
  readonly #log: PartitionLog;
  readonly #listener: AppendListener;
  #result: AppendResult | null = null;

  constructor(log: PartitionLog, listener: AppendListener, timeoutMs: number) {
    this.#log = log;
    this.#listener = listener;
    this.waitDeadline = performance.now() + timeoutMs;
  }

  appended(result: AppendResult): void {
    this.#result = result;
    this.waitOffset = result.lastOffset;
    if (!this.#log.park(this)) this.waitEnded();
  }

  appendFailed(err: Error): void {
    this.#listener.appendFailed(err);
  }

  waitEnded(): void {
    const result = this.#result!;
    if (this.#log.highWatermark > result.lastOffset) {
      this.#listener.appended(result);
      return;
    }
    // Woken before its deadline with the records not committed: the leadership moved (or the log closed).
    if (performance.now() < this.waitDeadline) {
      this.#listener.appendFailed(
        new ConchError(
          ErrorCode.NOT_LEADER,
          `offsets ${result.baseOffset}-${result.lastOffset} were stored here, but this broker stopped leading before every in-sync replica had them`,
        ),
      );
      return;
    }
    this.#listener.appendFailed(
      new ConchError(
        ErrorCode.TIMEOUT,
        `offsets ${result.baseOffset}-${result.lastOffset} are stored on the leader but not yet on every in-sync replica`,
      ),
    );
  }
}
