/**
 * A broker's membership in the cluster: its lease (registration and candidacy share it, with the
 * self-fencing deadline: broker-lease.ts), the watched metadata, its candidacy for controller
 * (controller-candidacy.ts), and the roles it hands to the replica side (partition-roles.ts). It
 * is the ClusterView the replica side proposes ISR changes through.
 */
import { BrokerLease } from "./broker-lease.js";
import type { Controller, ControllerLog } from "./controller.js";
import { ControllerCandidacy } from "./controller-candidacy.js";
import type { MetaStore, MetaWatch } from "./etcd/meta-store.js";
import { type ControllerInfo, MetadataCache, type MetadataListener } from "./metadata-cache.js";
import { MetadataKeys } from "./metadata-keys.js";
import {
  type BrokerRecord,
  encodeBrokerRecord,
  encodePartitionRecord,
  type PartitionRecord,
  parsePartitionRecord,
} from "./metadata-records.js";
import { PartitionRoles } from "./partition-roles.js";
import type { BrokerEndpoint, ClusterView, ReplicaControl } from "./roles.js";

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
  #watch: MetaWatch | null = null;
  /** Set once the metadata is loaded and watched: the controller may act from then on. */
  #started = false;
  readonly #lease: BrokerLease;
  readonly #roles: PartitionRoles;
  readonly #candidacy: ControllerCandidacy;

  constructor(options: ClusterNodeOptions) {
    this.#o = options;
    this.store = options.store;
    this.brokerId = options.self.id;
    this.keys = new MetadataKeys(options.clusterId);
    this.cache = new MetadataCache(this.keys, (msg) => options.log.warn(msg));
    this.cache.addListener(this);
    this.#lease = new BrokerLease(
      { ...options, keys: this.keys },
      {
        fenced: () => this.#leaseFenced(),
        unfenced: () => this.#leaseUnfenced(),
        rejoined: () => {
          if (this.cache.controller === null) this.#candidacy.campaign();
        },
      },
    );
    this.#roles = new PartitionRoles(
      options.self.id,
      options.replicas,
      this.cache,
      options.log,
      () => this.fenced,
    );
    this.#candidacy = new ControllerCandidacy(
      this.brokerId,
      this.store,
      this.cache,
      this.keys,
      options.log,
      this.#lease,
    );
  }

  /** Whether this broker may lead now (its lease deadline has not passed). */
  get fenced(): boolean {
    return this.#lease.fenced;
  }

  get controller(): Controller | null {
    return this.#candidacy.controller;
  }

  /** Registers, loads and watches the metadata, runs for controller, applies this broker's roles. */
  async start(): Promise<void> {
    await this.#lease.register();
    const snapshot = await this.store.getPrefix(this.keys.root);
    this.cache.load(snapshot.entries, snapshot.revision);
    this.#roles.dropStrays();
    this.#watch = await this.store.watchPrefix(this.keys.root, snapshot.revision + 1, {
      events: (events) => this.cache.apply(events),
      failed: (err) => this.#o.log.warn(`cluster metadata watch failed: ${err.message}`),
    });
    this.#started = true;
    // Fenced now (a late keepalive on a loaded machine), it runs once the fence lifts (#leaseUnfenced).
    if (this.cache.controller === null) this.#candidacy.campaign();
  }

  /**
   * Whether this broker may lead at this instant. Past the lease deadline it fences itself here
   * and now, without waiting for the deadline timer: a process woken from a pause serves the
   * requests waiting on its sockets before its timers run.
   */
  leaseHeld(): boolean {
    return this.#lease.held();
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
      if (this.fenced || record === undefined) return false;
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
    const session = this.#lease.session;
    if (session === null || this.fenced || this.#lease.closed) return false;
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
    this.#lease.close();
    await this.#candidacy.stop();
    await this.#watch?.cancel().catch(() => {});
    await this.#lease.revoke();
    await this.#roles.settled();
  }

  // MetadataListener

  brokerUp(broker: BrokerRecord): void {
    this.#o.log.info(`broker ${broker.id} registered`);
    this.#candidacy.reconcile();
  }

  brokerDown(id: number): void {
    this.#o.log.info(`broker ${id} gone (its lease ended)`);
    this.#candidacy.reconcile();
  }

  controllerChanged(info: ControllerInfo | null): void {
    this.#candidacy.changed(info);
  }

  topicPut(): void {
    this.#candidacy.reconcile();
  }

  topicDeleted(): void {
    this.#candidacy.reconcile();
  }

  partitionPut(record: PartitionRecord): void {
    this.#candidacy.reconcile();
    this.#roles.apply(record);
  }

  partitionDeleted(topic: string, partition: number): void {
    this.#candidacy.reconcile();
    this.#roles.drop(topic, partition);
  }

  // The lease's fence

  #leaseFenced(): void {
    this.#o.replicas.fence();
    this.#candidacy.standDown();
  }

  #leaseUnfenced(): void {
    this.#o.replicas.unfence?.();
    // Roles were held back while fenced (as leader) or before the first load: apply them now.
    this.#roles.applyAll();
    if (this.#started) this.#candidacy.resume();
  }

  #parsePartition(topic: string, partition: number, text: string): PartitionRecord | undefined {
    try {
      return parsePartitionRecord(topic, partition, text);
    } catch {
      return undefined;
    }
  }
}
