/**
 * A broker's registration in the cluster under its etcd lease, and the self-fencing deadline that
 * lease gives it. Registration and the controller candidacy share the lease.
 *
 * Self-fencing: the lease is good until the send time of the last answered keepalive plus the
 * TTL (etcd counts from its receipt, which is later). When that passes without a renewal the
 * broker fences itself at once (ReplicaControl.fence) rather than waiting for a 'lost' event,
 * which comes late or not at all after a pause (docs/cluster.md). Epochs do the rest. Keepalive
 * answers overdue, it asks etcd how long the lease has left (lease-deadline.ts): an etcd leader
 * election delays every answer, and the lease outlives it.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import type { ControllerLog } from "./controller.js";
import type { MetaSession, MetaStore } from "./etcd/meta-store.js";
import { LeaseDeadline } from "./lease-deadline.js";
import { LeaseQuestions } from "./lease-questions.js";
import type { MetadataKeys } from "./metadata-keys.js";
import { type BrokerRecord, encodeBrokerRecord } from "./metadata-records.js";

/** The pause before a failed registration after a lost lease is tried again. */
const REJOIN_RETRY_MS = 1_000;

export interface BrokerLeaseOptions {
  readonly clusterId: string;
  readonly self: BrokerRecord;
  readonly store: MetaStore;
  readonly keys: MetadataKeys;
  readonly leaseTtlSeconds: number;
  readonly log: ControllerLog;
  /** How long registration waits for a previous holder of this broker id's lease to expire. */
  readonly registerWaitMs?: number;
}

/** What the broker does as its lease fences it, lifts the fence, or comes back under a new lease. */
export interface BrokerLeaseEvents {
  /** The broker fenced itself: it must lead nothing from now on. */
  fenced(): void;
  /** The fence lifted: the lease lives. */
  unfenced(): void;
  /** Registered again under a new lease after the last one was lost. */
  rejoined(): void;
}

export class BrokerLease {
  readonly #o: BrokerLeaseOptions;
  readonly #events: BrokerLeaseEvents;
  readonly #brokerId: number;
  #session: MetaSession | null = null;
  /** Bumped for each lease: events of an older lease are ignored. */
  #generation = 0;
  #deadline: LeaseDeadline;
  #deadlineTimer: NodeJS.Timeout | null = null;
  /** Whether the lease lives, asked of etcd when keepalive answers are overdue. */
  #questions: LeaseQuestions | null = null;
  #fenced = true;
  /** Why the broker last fenced itself, until the fence lifts (for the log). */
  #fencedWhy: string | null = null;
  #closed = false;

  constructor(options: BrokerLeaseOptions, events: BrokerLeaseEvents) {
    this.#o = options;
    this.#events = events;
    this.#brokerId = options.self.id;
    this.#deadline = new LeaseDeadline(options.leaseTtlSeconds);
  }

  /** The lease the broker's keys live under; null between a lost lease and the next one. */
  get session(): MetaSession | null {
    return this.#session;
  }

  /** Whether this broker may lead now (its lease deadline has not passed). */
  get fenced(): boolean {
    return this.#fenced;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Whether this broker may lead at this instant. Past the lease deadline it fences itself here
   * and now, without waiting for the deadline timer: a process woken from a pause serves the
   * requests waiting on its sockets before its timers run.
   */
  held(): boolean {
    if (this.#fenced) return false;
    if (this.#deadline.held(performance.now())) return true;
    this.#deadlinePassed();
    return false;
  }

  /** Stops renewing and fences: the lease itself goes with `revoke`. */
  close(): void {
    this.#closed = true;
    this.#questions?.stop();
    this.#fence("closing");
  }

  /** Revokes the lease: this broker's keys go at once. */
  async revoke(): Promise<void> {
    await this.#session?.revoke().catch(() => {});
  }

  async register(): Promise<void> {
    const generation = ++this.#generation;
    this.#deadline = new LeaseDeadline(this.#o.leaseTtlSeconds);
    const session = await this.#o.store.openSession(this.#o.leaseTtlSeconds, {
      renewed: (validUntil) => this.#renewed(generation, validUntil),
      lost: (err) => this.#lost(generation, err),
    });
    const key = this.#o.keys.broker(this.#brokerId);
    const value = encodeBrokerRecord(this.#o.self);
    // A broker restarted within its old lease's TTL finds its id still registered: wait it out.
    const until = performance.now() + (this.#o.registerWaitMs ?? (this.#o.leaseTtlSeconds + 2) * 1000);
    for (;;) {
      let res: { succeeded: boolean };
      try {
        res = await this.#o.store.txn(
          [{ key, target: "create", revision: 0 }],
          [{ type: "put", key, value, leased: session }],
        );
      } catch (err) {
        // Not kept alive for nothing: the next try grants a lease of its own.
        this.#generation++;
        session.release();
        throw err;
      }
      if (res.succeeded) break;
      if (performance.now() > until || this.#closed) {
        this.#generation++;
        await session.revoke().catch(() => {});
        throw new ConchError(
          ErrorCode.INVALID_CONFIG,
          `broker id ${this.#brokerId} is already registered in cluster ${this.#o.clusterId} by a live broker`,
        );
      }
      // Polling: an expiry is an event only a watch would show, and this happens once per start.
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    this.#session = session;
    this.#questions = new LeaseQuestions(session, this.#deadline, (answer) => {
      if (answer === "expired") this.#lost(generation, new Error("etcd says the lease has expired"));
      else this.#deadlineMoved();
    });
    if (this.#deadline.held(performance.now())) this.#unfence();
    this.#questions.arm();
  }

  #renewed(generation: number, validUntil: number): void {
    if (generation !== this.#generation || this.#closed) return;
    this.#deadline.renewed(validUntil);
    // Before registration completes the renewal only moves the deadline (from the grant).
    if (this.#session === null) return;
    this.#deadlineMoved();
  }

  #deadlineMoved(): void {
    this.#armDeadline();
    if (this.#fenced && this.#deadline.held(performance.now())) this.#unfence();
    this.#questions?.arm();
  }

  #lost(generation: number, err: Error): void {
    if (generation !== this.#generation || this.#closed) return;
    this.#generation++;
    this.#o.log.warn(`lease lost: ${err.message}`);
    this.#fence("lease lost");
    // Lifted by a new lease, not by a renewal of this one.
    this.#fencedWhy = null;
    this.#questions?.stop();
    this.#questions = null;
    this.#session?.release();
    this.#session = null;
    this.#rejoin();
  }

  /**
   * Joins again under a new lease, as a returning broker: the controller has moved (or will move)
   * this broker's leaderships, and its roles come back from the metadata. A failed try (etcd
   * unreachable or slow to answer) is tried again until it succeeds or the node closes: a broker
   * that gave up here would stay fenced, a replica no one can reach, for good.
   */
  #rejoin(): void {
    if (this.#closed) return;
    this.register()
      .then(() => this.#events.rejoined())
      .catch((e: unknown) => {
        if (this.#closed) return;
        this.#o.log.warn(
          `registering again failed (${(e as Error).message}); trying again in ${REJOIN_RETRY_MS} ms`,
        );
        setTimeout(() => this.#rejoin(), REJOIN_RETRY_MS).unref();
      });
  }

  #armDeadline(): void {
    if (this.#deadlineTimer !== null) clearTimeout(this.#deadlineTimer);
    const wait = Math.max(0, this.#deadline.validUntil - performance.now());
    this.#deadlineTimer = setTimeout(() => {
      this.#deadlineTimer = null;
      // Timers may fire a little early by performance.now(): then wait out the rest.
      if (this.#deadline.held(performance.now())) {
        this.#armDeadline();
        return;
      }
      this.#deadlinePassed();
    }, wait);
    this.#deadlineTimer.unref();
  }

  /**
   * Fenced, the broker leads nothing until etcd answers: a keepalive or LeaseTimeToLive saying the
   * lease lives lifts the fence, and only etcd saying it does not makes the broker join again under
   * a new lease (lease-deadline.ts). The questions go on meanwhile.
   */
  #deadlinePassed(): void {
    this.#fence("lease deadline passed");
    this.#questions?.arm();
  }

  #fence(why: string): void {
    if (this.#deadlineTimer !== null) clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = null;
    if (this.#fenced) return;
    this.#fenced = true;
    this.#events.fenced();
    if (!this.#closed) {
      this.#fencedWhy = why;
      this.#o.log.warn(`fenced: ${why}; leading nothing until etcd says the lease lives`);
    }
  }

  #unfence(): void {
    this.#fenced = false;
    if (this.#fencedWhy !== null) {
      this.#o.log.info(`fence lifted: the lease lives (it was: ${this.#fencedWhy})`);
      this.#fencedWhy = null;
    }
    this.#armDeadline();
    this.#events.unfenced();
  }
}
