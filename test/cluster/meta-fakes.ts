/**
 * Test doubles around the real store: a ReplicaControl that records the roles it is given, and a
 * MetaStore wrapper whose sessions can be made to stop renewing (a "crash" that leaves etcd to
 * expire the lease) or to go silent (a paused process: etcd keeps the lease, the broker hears nothing).
 */
import type {
  MetaCompare,
  MetaEntry,
  MetaOp,
  MetaSession,
  MetaSnapshot,
  MetaStore,
  MetaTxnResult,
  MetaWatch,
  SessionListener,
  WatchListener,
} from "../../src/cluster/etcd/meta-store.js";
import type { PartitionRole, ReplicaControl } from "../../src/cluster/roles.js";

export class RecordingReplicas implements ReplicaControl {
  readonly roles: PartitionRole[] = [];
  readonly dropped: string[] = [];
  fences = 0;

  async applyRole(role: PartitionRole): Promise<void> {
    this.roles.push(role);
  }

  async dropPartition(topic: string, partition: number): Promise<void> {
    this.dropped.push(`${topic}/${partition}`);
  }

  fence(): void {
    this.fences++;
  }

  async close(): Promise<void> {}

  /** The last role received for the partition. */
  last(topic: string, partition: number): PartitionRole | undefined {
    return this.roles.findLast((r) => r.topic === topic && r.partition === partition);
  }
}

export class ControlledStore implements MetaStore {
  readonly #inner: MetaStore;
  readonly #sessions: MetaSession[] = [];
  #silent = false;
  #keepalivesMuted = false;
  #dead = false;
  #opened = 0;
  #mutedBelow = 0;
  #failSessions = 0;

  constructor(inner: MetaStore) {
    this.#inner = inner;
  }

  /** Renewals stop reaching the node; etcd still has the lease. */
  silence(on: boolean): void {
    this.#silent = on;
  }

  /**
   * Keepalive answers stop reaching the node while etcd keeps the lease and answers questions
   * about it (an etcd leader election, as the broker sees it).
   */
  muteKeepalives(on: boolean): void {
    this.#keepalivesMuted = on;
  }

  /** Like SIGKILL as etcd sees it: keepalives, watch events and writes stop; the leases expire after their TTL. */
  async crash(): Promise<void> {
    this.#silent = true;
    this.#dead = true;
    for (const s of this.#sessions) s.release();
  }

  /**
   * The leases so far stop being kept alive and their renewals and 'lost' events never reach the
   * node (the client's silent failure); sessions opened later work.
   */
  dropLeases(): void {
    this.#mutedBelow = this.#opened;
    for (const s of this.#sessions) s.release();
  }

  /** The next `n` sessions are refused, as by an etcd that does not answer in time. */
  failSessions(n: number): void {
    this.#failSessions = n;
  }

  async openSession(ttlSeconds: number, listener: SessionListener): Promise<MetaSession> {
    if (this.#failSessions > 0) {
      this.#failSessions--;
      throw new Error("etcd did not answer the lease grant in time");
    }
    const index = this.#opened++;
    const muted = (): boolean => this.#silent || this.#keepalivesMuted || index < this.#mutedBelow;
    const session = await this.#inner.openSession(ttlSeconds, {
      renewed: (t) => {
        if (!muted()) listener.renewed(t);
      },
      lost: (err) => {
        if (!muted()) listener.lost(err);
      },
    });
    this.#sessions.push(session);
    // Silenced, the node hears nothing from etcd; a dropped lease is the keepalive loop's silent
    // failure, and etcd still answers questions about it.
    const silent = (): boolean => this.#silent;
    return {
      leaseId: session.leaseId,
      ttlSeconds: session.ttlSeconds,
      revoke: () => session.revoke(),
      release: () => session.release(),
      timeToLive: (timeoutMs) =>
        silent()
          ? new Promise((_, reject) => setTimeout(() => reject(new Error("no answer")), timeoutMs).unref())
          : session.timeToLive(timeoutMs),
    };
  }

  getPrefix(prefix: string): Promise<MetaSnapshot> {
    return this.#inner.getPrefix(prefix);
  }

  get(key: string): Promise<MetaEntry | undefined> {
    return this.#inner.get(key);
  }

  async watchPrefix(prefix: string, fromRevision: number, listener: WatchListener): Promise<MetaWatch> {
    return this.#inner.watchPrefix(prefix, fromRevision, {
      events: (events) => {
        if (!this.#dead) listener.events(events);
      },
      failed: (err) => listener.failed(err),
    });
  }

  txn(compares: readonly MetaCompare[], ops: readonly MetaOp[]): Promise<MetaTxnResult> {
    if (this.#dead) return Promise.reject(new Error("crashed"));
    return this.#inner.txn(compares, ops);
  }

  close(): void {}
}
