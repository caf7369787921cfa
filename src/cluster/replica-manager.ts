/**
 * The replica side of cluster mode (docs/cluster.md, "Replication"): it takes the roles the
 * metadata side hands it (ReplicaControl) and makes each hosted partition a leader (ReplicaLeader:
 * followers' log ends, ISR, high watermark) or a follower (ReplicaFetcher: a stream from the
 * leader). To the broker it is the PartitionReplication that restricts produce and fetch to
 * leaders and makes acks "all" wait for the ISR; to the server, the ReplicaFeed behind ReplicaFetch.
 *
 * Becoming leader of epoch E records (E, log end) in the partition's leader-epoch file, on disk,
 * before the first write of E is taken. fence() (the broker's lease deadline passed) stops every
 * leadership at once: produce and replica fetches are refused, and the high watermarks stay where
 * they are, so nothing more is acknowledged with acks "all".
 */
import type { Logger } from "pino";
import type { Broker } from "../broker/broker.js";
import type { PartitionReplication } from "../broker/replication.js";
import type { ConnectionOptions } from "../client/connection.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { PartitionLog } from "../storage/partition-log.js";
import { ReplicaFetcher } from "./replica-fetcher.js";
import { ReplicaLeader } from "./replica-leader.js";
import type { ClusterView, PartitionRole, ReplicaControl } from "./roles.js";

export interface ReplicaManagerOptions {
  broker: Broker;
  view: ClusterView;
  logger?: Logger | undefined;
  /** A follower out of step this long leaves the ISR (replica.lag.time.max.ms; default 10 s). */
  lagTimeMaxMs?: number;
  /** The topic's min.insync.replicas (default 1). */
  minInsyncReplicas?: (topic: string) => number;
  /** Record bytes per replica fetch response (default 1 MiB) and ahead of credit (default 4 MiB). */
  fetchMaxBytes?: number;
  fetchWindowBytes?: number;
  /** How often an idle leader answers a follower's stream (default 500 ms). */
  fetchMaxWaitMs?: number;
  /** Longest pause before a failed replica stream is opened again (default 200 ms; the first is 10 ms, doubling). */
  fetchRetryMs?: number;
  /** Connect and request timeouts of the followers' connections (defaults 5 s, 10 s). */
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
}

type Hosted =
  | { kind: "leader"; role: PartitionRole; leader: ReplicaLeader }
  | { kind: "follower"; role: PartitionRole; log: PartitionLog; fetcher: ReplicaFetcher | null }
  | { kind: "offline"; role: PartitionRole };

export class ReplicaManager implements ReplicaControl, PartitionReplication {
  readonly #o: ReplicaManagerOptions;
  readonly #broker: Broker;
  readonly #view: ClusterView;
  readonly #partitions = new Map<string, Hosted>();
  /** Role changes of a partition run one after another, in the order they were handed over. */
  readonly #changes = new Map<string, Promise<void>>();
  readonly #lagTimeMaxMs: number;
  readonly #connection: ConnectionOptions;
  /** One timer for the whole broker: the ISR check of every partition it leads. */
  readonly #isrTimer: NodeJS.Timeout;
  #fenced = false;
  #closed = false;

  constructor(options: ReplicaManagerOptions) {
    this.#o = options;
    this.#broker = options.broker;
    this.#view = options.view;
    this.#lagTimeMaxMs = options.lagTimeMaxMs ?? 10_000;
    this.#connection = {
      clientId: `conch-replica-${options.view.brokerId}`,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    };
    this.#isrTimer = setInterval(() => this.#checkIsr(), Math.max(50, Math.floor(this.#lagTimeMaxMs / 4)));
    this.#isrTimer.unref();
    this.#broker.setReplication(this);
  }

  // ---- ReplicaControl ------------------------------------------------------------------------

  applyRole(role: PartitionRole): Promise<void> {
    return this.#serially(keyOf(role.topic, role.partition), () => this.#apply(role));
  }

  async #apply(role: PartitionRole): Promise<void> {
    if (this.#closed) return;
    const key = keyOf(role.topic, role.partition);
    const current = this.#partitions.get(key);
    const self = this.#view.brokerId;
    const kind = role.leaderId === self ? "leader" : role.leaderId < 0 ? "offline" : "follower";
    // A leader the fence stopped is made again for the same epoch once the fence lifts.
    const stopped = current?.kind === "leader" && current.leader.stopped;
    if (
      current !== undefined &&
      current.role.leaderEpoch === role.leaderEpoch &&
      current.kind === kind &&
      !stopped
    ) {
      // The same epoch again, perhaps with the ISR the controller changed (a broker that died).
      if (current.kind === "leader" && !sameMembers(current.leader.role.replicas, role.replicas))
        current.leader.setReplicas(role.replicas, performance.now());
      if (current.kind === "leader" && !sameMembers(current.leader.isr, role.isr))
        current.leader.settled(role.isr);
      current.role = role;
      return;
    }
    if (current !== undefined && role.leaderEpoch < current.role.leaderEpoch) return;
    this.#stopHosted(current);
    const log = this.#broker.partition(role.topic, role.partition);
    if (kind === "offline") {
      this.#partitions.set(key, { kind, role });
      return;
    }
    if (kind === "leader") {
      // On disk before the first write of this epoch, so followers can find where it starts
      // (already there when this epoch's leadership resumes after a fence).
      if (log.epochs.latestEpoch !== role.leaderEpoch)
        await log.epochs.assign(role.leaderEpoch, log.logEndOffset);
      const leader = new ReplicaLeader(role, log, self, performance.now());
      if (this.#fenced) leader.stop();
      this.#partitions.set(key, { kind, role, leader });
      leader.updateHighWatermark();
      this.#o.logger?.info(
        {
          topic: role.topic,
          partition: role.partition,
          epoch: role.leaderEpoch,
          logEndOffset: log.logEndOffset,
        },
        "leading partition",
      );
      return;
    }
    this.#o.logger?.info(
      { topic: role.topic, partition: role.partition, epoch: role.leaderEpoch, leaderId: role.leaderId },
      "following partition",
    );
    const hosted: Hosted = { kind, role, log, fetcher: null };
    this.#partitions.set(key, hosted);
    // A follower's readers see nothing past what it knows is committed (the leader's HW, from the stream).
    log.setVisibilityCeiling(Math.min(log.highWatermark, log.logEndOffset));
    const endpoint = this.#view.endpoint(role.leaderId);
    if (endpoint === undefined) {
      this.#o.logger?.warn({ topic: role.topic, leaderId: role.leaderId }, "leader endpoint unknown");
      return;
    }
    hosted.fetcher = new ReplicaFetcher({
      topic: role.topic,
      partition: role.partition,
      replicaId: self,
      leaderEpoch: role.leaderEpoch,
      leader: endpoint,
      log,
      connection: this.#connection,
      maxBytes: this.#o.fetchMaxBytes ?? 1024 * 1024,
      windowBytes: this.#o.fetchWindowBytes ?? 4 * 1024 * 1024,
      maxWaitMs: this.#o.fetchMaxWaitMs ?? 500,
      retryMs: this.#o.fetchRetryMs ?? 200,
      logger: this.#o.logger,
    });
    hosted.fetcher.start();
  }

  dropPartition(topic: string, partition: number): Promise<void> {
    const key = keyOf(topic, partition);
    return this.#serially(key, async () => {
      this.#stopHosted(this.#partitions.get(key));
      this.#partitions.delete(key);
    });
  }

  /** Runs `change` after the partition's earlier changes (a leader's epoch file write is async). */
  #serially(key: string, change: () => Promise<void>): Promise<void> {
    const before = this.#changes.get(key) ?? Promise.resolve();
    const next = before.catch(() => {}).then(change);
    const tail = next.catch(() => {});
    this.#changes.set(key, tail);
    void tail.then(() => {
      if (this.#changes.get(key) === tail) this.#changes.delete(key);
    });
    return next;
  }

  fence(): void {
    if (this.#fenced) return;
    this.#fenced = true;
    for (const hosted of this.#partitions.values()) if (hosted.kind === "leader") hosted.leader.stop();
    this.#o.logger?.warn("lease deadline passed: no longer leading any partition");
  }

  unfence(): void {
    this.#fenced = false;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#isrTimer);
    for (const hosted of this.#partitions.values()) this.#stopHosted(hosted);
    this.#partitions.clear();
    if (this.#broker.replication === this) this.#broker.setReplication(null);
  }

  // ---- PartitionReplication (the broker) and ReplicaFeed (the server) --------------------------

  checkLeader(topic: string, partition: number): void {
    this.#leading(topic, partition);
  }

  checkInSync(topic: string, partition: number): void {
    const leader = this.#leading(topic, partition);
    const min = this.#o.minInsyncReplicas?.(topic) ?? 1;
    if (leader.isr.length < min) {
      throw new ConchError(
        ErrorCode.NOT_ENOUGH_REPLICAS,
        `${topic}/${partition} has ${leader.isr.length} in-sync replica(s); min.insync.replicas is ${min}`,
      );
    }
  }

  leaderLog(topic: string, partition: number, leaderEpoch: number): PartitionLog {
    const leader = this.#leading(topic, partition);
    if (leaderEpoch !== leader.role.leaderEpoch) {
      throw new ConchError(
        ErrorCode.FENCED_LEADER_EPOCH,
        `${topic}/${partition} is at leader epoch ${leader.role.leaderEpoch}, not ${leaderEpoch}`,
      );
    }
    return leader.log;
  }

  followerAt(topic: string, partition: number, replicaId: number, leaderEpoch: number, leo: number): void {
    const hosted = this.#partitions.get(keyOf(topic, partition));
    if (hosted?.kind !== "leader" || hosted.role.leaderEpoch !== leaderEpoch) return;
    // A follower's word moves the high watermark, which answers acks "all": not past the deadline.
    if (!this.#view.leaseHeld()) return;
    const leader = hosted.leader;
    const hwBefore = leader.log.highWatermark;
    const joining = leader.followerAt(replicaId, leo, performance.now());
    if (!leader.hwMoved && leader.log.highWatermark > hwBefore) {
      // Once per epoch: when acks "all" can first be answered after a change of leader.
      leader.hwMoved = true;
      this.#o.logger?.info(
        { topic, partition, epoch: leaderEpoch, highWatermark: leader.log.highWatermark, replicaId },
        "high watermark moves in this epoch",
      );
    }
    // A broker in a controlled shutdown was taken out of the ISR on purpose: it does not rejoin.
    if (joining !== null && this.#view.leaving?.(joining) !== true)
      this.#propose(leader, leader.grownIsr(joining));
  }

  /** What this broker holds of a partition now, for tests and metrics. */
  describe(topic: string, partition: number): { kind: string; isr: readonly number[] } | undefined {
    const hosted = this.#partitions.get(keyOf(topic, partition));
    if (hosted === undefined) return undefined;
    return { kind: hosted.kind, isr: hosted.kind === "leader" ? hosted.leader.isr : hosted.role.isr };
  }

  #leading(topic: string, partition: number): ReplicaLeader {
    const hosted = this.#partitions.get(keyOf(topic, partition));
    // Past the lease deadline this fences every leadership (fence() below) before the check.
    if (hosted?.kind === "leader") this.#view.leaseHeld();
    if (hosted?.kind !== "leader" || hosted.leader.stopped) {
      const leaderId = hosted === undefined ? -1 : hosted.role.leaderId;
      throw new ConchError(
        ErrorCode.NOT_LEADER,
        `broker ${this.#view.brokerId} does not lead ${topic}/${partition}` +
          (leaderId >= 0 && leaderId !== this.#view.brokerId ? ` (broker ${leaderId} does)` : ""),
      );
    }
    return hosted.leader;
  }

  #checkIsr(): void {
    const now = performance.now();
    for (const hosted of this.#partitions.values()) {
      if (hosted.kind !== "leader") continue;
      const shrunk = hosted.leader.shrunkIsr(now, this.#lagTimeMaxMs);
      if (shrunk !== null) this.#propose(hosted.leader, shrunk);
    }
  }

  /** Sends an ISR change to the cluster; a refusal means the epoch moved: stop leading. */
  #propose(leader: ReplicaLeader, isr: number[]): void {
    const role = leader.role;
    leader.proposing();
    this.#o.logger?.info(
      { topic: role.topic, partition: role.partition, from: leader.isr, to: isr },
      "ISR change",
    );
    this.#view.proposeIsr(role.topic, role.partition, role.leaderEpoch, isr).then(
      (ok) => {
        leader.settled(ok ? isr : null);
        if (!ok) {
          leader.stop();
          this.#o.logger?.warn(
            { topic: role.topic, partition: role.partition, epoch: role.leaderEpoch },
            "the leader epoch moved: stepping down",
          );
        }
      },
      (err: unknown) => {
        leader.settled(null);
        this.#o.logger?.warn({ err, topic: role.topic, partition: role.partition }, "ISR change failed");
      },
    );
  }

  #stopHosted(hosted: Hosted | undefined): void {
    if (hosted === undefined) return;
    if (hosted.kind === "leader") {
      hosted.leader.stop();
      // Produces waiting for acks "all" answer NOT_LEADER now, and their clients retry at the new leader.
      hosted.leader.log.wakeWaiters();
    } else if (hosted.kind === "follower") hosted.fetcher?.stop();
  }
}

function keyOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function sameMembers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id) => b.includes(id));
}
