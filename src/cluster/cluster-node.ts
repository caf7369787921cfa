/**
 * A broker's membership in the cluster: its lease (registration and candidacy share it), the
 * self-fencing deadline, the watched metadata, the controller when this broker wins the election,
 * and the roles it hands to the replica side (ReplicaControl). It is the ClusterView the replica
 * side proposes ISR changes through.
 *
 * Self-fencing: the lease is good until the send time of the last answered keepalive plus the
 * TTL (etcd counts from its receipt, which is later). When that passes without a renewal the
 * broker fences itself at once (ReplicaControl.fence) rather than waiting for a 'lost' event,
 * which comes late or not at all after a pause (docs/cluster.md). Epochs do the rest. Keepalive
 * answers overdue, it asks etcd how long the lease has left (lease-deadline.ts): an etcd leader
 * election delays every answer, and the lease outlives it.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { Controller, type ControllerLog } from "./controller.js";
import type { MetaSession, MetaStore, MetaWatch } from "./etcd/meta-store.js";
import { LeaseDeadline } from "./lease-deadline.js";
import { LeaseQuestions } from "./lease-questions.js";
import { type ControllerInfo, MetadataCache, type MetadataListener } from "./metadata-cache.js";
import { MetadataKeys } from "./metadata-keys.js";
import {
  type BrokerRecord,
  encodeBrokerRecord,
  encodeControllerRecord,
  encodePartitionRecord,
  type PartitionRecord,
  parsePartitionRecord,
} from "./metadata-records.js";
import type { BrokerEndpoint, ClusterView, ReplicaControl } from "./roles.js";

/** The pause before a failed registration after a lost lease is tried again. */
const REJOIN_RETRY_MS = 1_000;

export interface ClusterNodeOptions {
  readonly clusterId: string;
  readonly self: BrokerRecord;
  readonly store: MetaStore;
  readonly replicas: ReplicaControl;
  readonly leaseTtlSeconds: number;
  readonly log: ControllerLog;
  /** How long registration waits for a previous holder of this broker id's lease to expire. */
  readonly registerWaitMs?: number;
}

export class ClusterNode implements ClusterView, MetadataListener {
  readonly brokerId: number;
  readonly keys: MetadataKeys;
  readonly cache: MetadataCache;
  readonly #o: ClusterNodeOptions;
  /** The metadata store; topic admin writes through it too. */
  readonly store: MetaStore;
  #session: MetaSession | null = null;
  #watch: MetaWatch | null = null;
  #controller: Controller | null = null;
  #campaigning = false;
  /**
   * The controller epoch this broker's campaign won, under which lease: a fence stops the
   * Controller, and the lifted fence resumes it in the same epoch while that lease lives (the key
   * is still this broker's, so no other broker runs for it).
   */
  #won: { readonly epoch: number; readonly session: MetaSession } | null = null;
  /** Set once the metadata is loaded and watched: the controller may act from then on. */
  #started = false;
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
  /** Partitions this broker holds a replica of ("topic/p"). */
  readonly #hosted = new Set<string>();
  /** Role changes of a partition run one after another, in the order the metadata changed. */
  readonly #chains = new Map<string, Promise<void>>();

  constructor(options: ClusterNodeOptions) {
    this.#o = options;
    this.store = options.store;
    this.brokerId = options.self.id;
    this.#deadline = new LeaseDeadline(options.leaseTtlSeconds);
    this.keys = new MetadataKeys(options.clusterId);
    this.cache = new MetadataCache(this.keys, (msg) => options.log.warn(msg));
    this.cache.addListener(this);
  }

  /** Whether this broker may lead now (its lease deadline has not passed). */
  get fenced(): boolean {
    return this.#fenced;
  }

  get controller(): Controller | null {
    return this.#controller;
  }

  /** Registers, loads and watches the metadata, runs for controller, applies this broker's roles. */
  async start(): Promise<void> {
    await this.#register();
    const snapshot = await this.store.getPrefix(this.keys.root);
    this.cache.load(snapshot.entries, snapshot.revision);
    this.#dropStrays();
    this.#watch = await this.store.watchPrefix(this.keys.root, snapshot.revision + 1, {
      events: (events) => this.cache.apply(events),
      failed: (err) => this.#o.log.warn(`cluster metadata watch failed: ${err.message}`),
    });
    this.#started = true;
    // Fenced now (a late keepalive on a loaded machine), it runs once the fence lifts (#unfence).
    if (this.cache.controller === null) this.#campaign();
  }

  /**
   * Whether this broker may lead at this instant. Past the lease deadline it fences itself here
   * and now, without waiting for the deadline timer: a process woken from a pause serves the
   * requests waiting on its sockets before its timers run.
   */
  leaseHeld(): boolean {
    if (this.#fenced) return false;
    if (this.#deadline.held(performance.now())) return true;
    this.#deadlinePassed();
    return false;
  }

  endpoint(brokerId: number): BrokerEndpoint | undefined {
    return this.cache.brokers.get(brokerId);
  }

  async proposeIsr(
    topic: string,
    partition: number,
    leaderEpoch: number,
    isr: readonly number[],
  ): Promise<boolean> {
    const key = this.keys.partition(topic, partition);
    const cached = this.cache.partition(topic, partition);
    let record: PartitionRecord | undefined = cached?.value;
    let modRevision = cached?.modRevision ?? 0;
    // A concurrent write of the record within the same epoch (none is expected, but the
    // controller may rewrite it) means another try from what the store holds now.
    for (let attempt = 0; attempt < 5; attempt++) {
      if (this.#fenced || record === undefined) return false;
      if (record.leaderEpoch !== leaderEpoch || record.leaderId !== this.brokerId) return false;
      // The leader is always in sync with itself, and only replicas can be.
      const replicas = record.replicas;
      if (!isr.includes(this.brokerId) || isr.some((id) => !replicas.includes(id))) {
        throw new RangeError(
          `ISR [${isr.join(",")}] of ${topic}/${partition} is not the leader and some of [${replicas.join(",")}]`,
        );
      }
      // A broker whose registration is gone never goes back in: the controller took it out.
      const value = encodePartitionRecord({
        ...record,
        isr: isr.filter((id) => id === this.brokerId || this.cache.brokers.has(id)),
      });
      const res = await this.store.txn(
        [{ key, target: "mod", revision: modRevision }],
        [{ type: "put", key, value }],
      );
      if (res.succeeded) return true;
      const fresh = await this.store.get(key);
      if (fresh === undefined) return false;
      record = this.#parsePartition(topic, partition, fresh.value);
      modRevision = fresh.modRevision;
    }
    return false;
  }

  leaving(brokerId: number): boolean {
    return this.cache.brokers.get(brokerId)?.shuttingDown === true;
  }

  /**
   * Controlled shutdown: marks this broker's record `shuttingDown` (under its lease), so the
   * controller hands its leaderships to other in-sync replicas and takes it out of the ISRs, and
   * waits until its view shows that done (or `timeoutMs` passes; false then). The broker serves all
   * the while, answering NOT_LEADER for what it no longer leads, so clients move on at once rather
   * than after a lease's TTL. A partition whose ISR has no other live member stays led here.
   */
  async shutDown(timeoutMs: number): Promise<boolean> {
    const session = this.#session;
    if (session === null || this.#fenced || this.#closed) return false;
    const key = this.keys.broker(this.brokerId);
    const value = encodeBrokerRecord({ ...this.#o.self, shuttingDown: true });
    await this.store.txn([], [{ type: "put", key, value, leased: session }]);
    return this.cache.waitFor(() => this.#handedOver(), timeoutMs);
  }

  /** Nothing left that the controller could move off this broker. */
  #handedOver(): boolean {
    const self = this.brokerId;
    const leadable = (id: number): boolean => id !== self && this.cache.canLead(id);
    if (this.cache.brokers.get(self)?.shuttingDown !== true) return false;
    for (const byPartition of this.cache.partitions.values()) {
      for (const { value: r } of byPartition.values()) {
        if (r.leaderId === self && r.isr.some(leadable)) return false;
        if (r.leaderId !== self && leadable(r.leaderId) && r.isr.includes(self)) return false;
      }
    }
    return true;
  }

  /** Revokes the lease (this broker's keys go at once) and stops watching. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#questions?.stop();
    this.#fence("closing");
    await this.#controller?.stop();
    await this.#watch?.cancel().catch(() => {});
    await this.#session?.revoke().catch(() => {});
    await Promise.allSettled(this.#chains.values());
  }

  // MetadataListener

  brokerUp(broker: BrokerRecord): void {
    this.#o.log.info(`broker ${broker.id} registered`);
    this.#controller?.reconcile();
  }

  brokerDown(id: number): void {
    this.#o.log.info(`broker ${id} gone (its lease ended)`);
    this.#controller?.reconcile();
  }

  controllerChanged(info: ControllerInfo | null): void {
    const mine = this.#controller;
    if (mine !== null && (info === null || info.epoch !== mine.epoch)) {
      this.#o.log.warn(`controller epoch ${mine.epoch} ended`);
      void mine.stop();
      this.#controller = null;
    }
    if (this.#won !== null && info?.epoch !== this.#won.epoch) this.#won = null;
    if (info === null) this.#campaign();
  }

  topicPut(): void {
    this.#controller?.reconcile();
  }

  topicDeleted(): void {
    this.#controller?.reconcile();
  }

  partitionPut(record: PartitionRecord): void {
    this.#controller?.reconcile();
    this.#applyRecord(record);
  }

  partitionDeleted(topic: string, partition: number): void {
    this.#controller?.reconcile();
    this.#drop(topic, partition);
  }

  // Membership

  async #register(): Promise<void> {
    const generation = ++this.#generation;
    this.#deadline = new LeaseDeadline(this.#o.leaseTtlSeconds);
    const session = await this.store.openSession(this.#o.leaseTtlSeconds, {
      renewed: (validUntil) => this.#renewed(generation, validUntil),
      lost: (err) => this.#lost(generation, err),
    });
    const key = this.keys.broker(this.brokerId);
    const value = encodeBrokerRecord(this.#o.self);
    // A broker restarted within its old lease's TTL finds its id still registered: wait it out.
    const until = performance.now() + (this.#o.registerWaitMs ?? (this.#o.leaseTtlSeconds + 2) * 1000);
    for (;;) {
      let res: { succeeded: boolean };
      try {
        res = await this.store.txn(
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
          `broker id ${this.brokerId} is already registered in cluster ${this.#o.clusterId} by a live broker`,
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
    this.#register()
      .then(() => {
        if (this.cache.controller === null) this.#campaign();
      })
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
    this.#o.replicas.fence();
    if (!this.#closed) {
      this.#fencedWhy = why;
      this.#o.log.warn(`fenced: ${why}; leading nothing until etcd says the lease lives`);
    }
    const c = this.#controller;
    this.#controller = null;
    void c?.stop();
  }

  #unfence(): void {
    this.#fenced = false;
    if (this.#fencedWhy !== null) {
      this.#o.log.info(`fence lifted: the lease lives (it was: ${this.#fencedWhy})`);
      this.#fencedWhy = null;
    }
    this.#o.replicas.unfence?.();
    this.#armDeadline();
    // Roles were held back while fenced (as leader) or before the first load: apply them now.
    for (const byPartition of this.cache.partitions.values()) {
      for (const { value } of byPartition.values()) this.#applyRecord(value);
    }
    if (!this.#started) return;
    // The fence stopped the controller (or came before a campaign): without this, a broker whose
    // fence lifted keeps the controller key and no broker acts as controller until its lease ends.
    this.#takeControl();
    if (this.#controller === null && this.cache.controller === null) this.#campaign();
  }

  /** Acts as controller in the epoch its campaign won, if that lease still holds and is not fenced. */
  #takeControl(): void {
    const won = this.#won;
    if (won === null || this.#controller !== null || this.#fenced || this.#closed) return;
    const current = this.cache.controller;
    if (won.session !== this.#session || (current !== null && current.epoch !== won.epoch)) {
      this.#won = null;
      return;
    }
    const controller = new Controller(won.epoch, this.store, this.cache, this.keys, this.#o.log);
    this.#controller = controller;
    this.#o.log.info(`broker ${this.brokerId} is the controller (epoch ${won.epoch})`);
    void controller.deposed.then(() => {
      if (this.#controller === controller) this.#controller = null;
      if (this.#won?.epoch === won.epoch) this.#won = null;
    });
    controller.reconcile();
  }

  #campaign(): void {
    const session = this.#session;
    if (this.#campaigning || this.#fenced || session === null || this.#closed) return;
    this.#campaigning = true;
    this.store
      .txn(
        [{ key: this.keys.controller, target: "create", revision: 0 }],
        [
          {
            type: "put",
            key: this.keys.controller,
            value: encodeControllerRecord(this.brokerId),
            leased: session,
          },
        ],
      )
      .then((res) => {
        if (!res.succeeded || session !== this.#session) return;
        // The key was created by this txn, so its create_revision is the txn's revision. Fenced
        // meanwhile, the broker acts on it once the fence lifts.
        this.#won = { epoch: res.revision, session };
        this.#takeControl();
      })
      .catch((err: unknown) => this.#o.log.warn(`controller campaign failed: ${(err as Error).message}`))
      .finally(() => {
        this.#campaigning = false;
        // The controller may have gone while the txn ran (a lost race with a dying controller).
        if (this.cache.controller === null && this.#controller === null)
          setTimeout(() => this.#campaign(), 100).unref();
      });
  }

  // Roles

  #applyRecord(record: PartitionRecord): void {
    const id = `${record.topic}/${record.partition}`;
    if (!record.replicas.includes(this.brokerId)) {
      this.#drop(record.topic, record.partition);
      return;
    }
    // A fenced broker takes no role: a leader role would let it acknowledge without a lease.
    if (this.#fenced) return;
    // Every change is applied (the ISR is part of the role); the same epoch again is a no-op there.
    this.#hosted.add(id);
    this.#chain(id, () => this.#o.replicas.applyRole(record));
  }

  /**
   * Replicas moved off this broker while it was down: the cluster's record of the partition no
   * longer names it, but its data is still on disk. Dropped like any replica reassigned away
   * (Kafka deletes such stray logs at start-up too). A topic the cluster does not know is left
   * alone: its data may predate the cluster (a single-node broker that joined one).
   */
  #dropStrays(): void {
    for (const { topic, partition } of this.#o.replicas.localPartitions?.() ?? []) {
      const record = this.cache.partition(topic, partition)?.value;
      if (record === undefined || record.replicas.includes(this.brokerId)) continue;
      this.#o.log.info(
        `${topic}/${partition} was moved off this broker while it was down: removing its data`,
      );
      this.#hosted.add(`${topic}/${partition}`);
      this.#drop(topic, partition);
    }
  }

  #drop(topic: string, partition: number): void {
    const id = `${topic}/${partition}`;
    if (!this.#hosted.delete(id)) return;
    this.#chain(id, () => this.#o.replicas.dropPartition(topic, partition));
  }

  #chain(id: string, step: () => Promise<void>): void {
    const previous = this.#chains.get(id) ?? Promise.resolve();
    const next = previous.then(step).catch((err: unknown) => {
      this.#o.log.warn(`role change of ${id} failed: ${(err as Error).message}`);
    });
    this.#chains.set(id, next);
    void next.then(() => {
      if (this.#chains.get(id) === next) this.#chains.delete(id);
    });
  }

  #parsePartition(topic: string, partition: number, text: string): PartitionRecord | undefined {
    try {
      return parsePartitionRecord(topic, partition, text);
    } catch {
      return undefined;
    }
  }
}
