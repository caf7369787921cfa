/**
 * The controller: one broker at a time, elected by a txn on the leased `controller` key; its epoch
 * is that key's create_revision. It keeps partition records true to the live brokers: records for
 * new topics, removal of deleted topics' records, a new leader when a leader's broker dies, and a
 * leader for an offline partition when an ISR member returns (controller-decisions.ts). It acts by
 * reconciling the whole view after each change rather than by reacting to single events, so a
 * write that fails (a concurrent ISR change, a stale view) is simply decided again from the next
 * view. Every write is a txn guarded by `create_revision(controller) == epoch` and each record's
 * mod_revision: a deposed controller changes nothing.
 */

import {
  electLeader,
  initialRecord,
  preferredLeader,
  reassignStep,
  withoutLeaving,
} from "./controller-decisions.js";
import type { MetaCompare, MetaOp, MetaStore } from "./etcd/meta-store.js";
import type { MetadataCache } from "./metadata-cache.js";
import type { MetadataKeys } from "./metadata-keys.js";
import { encodePartitionRecord } from "./metadata-records.js";

/** Partition records per txn: etcd allows 128 operations (--max-txn-ops), one compare is the epoch. */
export const RECORDS_PER_TXN = 100;

/**
 * How long a preferred leader must be back in the ISR before it leads again (Kafka checks every
 * 300 s; a returning broker here is usually a restart, and a short wait lets it settle first).
 */
export const DEFAULT_PREFERRED_LEADER_DELAY_MS = 3_000;

export interface ControllerLog {
  info(msg: string): void;
  warn(msg: string): void;
}

interface Change {
  readonly compare: MetaCompare;
  readonly op: MetaOp;
  /** What the change decides, logged once it is written (a leadership moved). */
  readonly why?: string;
}

export class Controller {
  readonly epoch: number;
  readonly #store: MetaStore;
  readonly #cache: MetadataCache;
  readonly #keys: MetadataKeys;
  readonly #log: ControllerLog;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  /** Resolves when the controller finds it has been deposed. */
  readonly deposed: Promise<void>;
  #markDeposed!: () => void;

  readonly #preferredDelayMs: number;
  /** Partitions ("topic/p") whose preferred leader could lead again, since when (performance.now()). */
  #imbalanced = new Map<string, number>();
  #wakeTimer: NodeJS.Timeout | null = null;
  #wakeAt = Number.POSITIVE_INFINITY;

  constructor(
    epoch: number,
    store: MetaStore,
    cache: MetadataCache,
    keys: MetadataKeys,
    log: ControllerLog,
    preferredDelayMs = DEFAULT_PREFERRED_LEADER_DELAY_MS,
  ) {
    this.epoch = epoch;
    this.#store = store;
    this.#cache = cache;
    this.#keys = keys;
    this.#log = log;
    this.#preferredDelayMs = preferredDelayMs;
    this.deposed = new Promise((resolve) => {
      this.#markDeposed = resolve;
    });
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Decide again from the current view; calls while a pass runs coalesce into one more pass. */
  reconcile(): void {
    if (this.#stopped) return;
    if (this.#running !== null) {
      this.#again = true;
      return;
    }
    this.#running = this.#loop().finally(() => {
      this.#running = null;
    });
  }

  /** Stops deciding; a pass under way finishes its current txn. */
  stop(): Promise<void> {
    this.#stopped = true;
    if (this.#wakeTimer !== null) clearTimeout(this.#wakeTimer);
    this.#wakeTimer = null;
    return this.#running ?? Promise.resolve();
  }

  async #loop(): Promise<void> {
    do {
      this.#again = false;
      try {
        const changes = this.#decide();
        if (changes.length > 0 && !(await this.#write(changes))) return;
      } catch (err) {
        this.#log.warn(`controller: pass failed, retrying: ${(err as Error).message}`);
        this.#again = true;
        // A store error (etcd unreachable): retry after a pause rather than spin.
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } while (this.#again && !this.#stopped);
  }

  #decide(): Change[] {
    const cache = this.#cache;
    const live = (id: number): boolean => cache.brokers.has(id);
    // A broker in a controlled shutdown is alive (it still serves) but takes no leadership.
    const leadable = (id: number): boolean => cache.canLead(id);
    const epochGuard = this.epoch;
    const now = performance.now();
    const imbalanced = new Map<string, number>();
    let wakeAt = Number.POSITIVE_INFINITY;
    const changes: Change[] = [];
    for (const [name, { value: topic }] of cache.topics) {
      const existing = cache.partitions.get(name);
      for (let p = 0; p < topic.partitions; p++) {
        if (existing?.has(p) === true) continue;
        const replicas = topic.assignment[p] ?? [];
        const key = this.#keys.partition(name, p);
        changes.push({
          compare: { key, target: "create", revision: 0 },
          op: { type: "put", key, value: encodePartitionRecord(initialRecord(replicas, live, epochGuard)) },
        });
      }
    }
    for (const [name, byPartition] of cache.partitions) {
      if (!cache.topics.has(name)) {
        // The topic was deleted: its records go too (one range delete per topic).
        const key = this.#keys.partitionsOf(name);
        changes.push({
          compare: { key: this.#keys.controller, target: "create", revision: epochGuard },
          op: { type: "delete", key, prefix: true },
        });
        continue;
      }
      const assignment = cache.topics.get(name)?.value.assignment;
      for (const { value: record, modRevision } of byPartition.values()) {
        const target = assignment?.[record.partition];
        let next =
          electLeader(record, live, epochGuard, leadable) ??
          withoutLeaving(record, leadable, epochGuard) ??
          (target === undefined ? null : reassignStep(record, target, leadable, epochGuard));
        const preferred = next === null ? preferredLeader(record, leadable, epochGuard) : null;
        if (preferred !== null) {
          // Moved back only after it has been in sync for a while (a restarted broker settles first);
          // the clock is kept until the move is seen, in case this pass's write has to be redone.
          const id = `${name}/${record.partition}`;
          const since = this.#imbalanced.get(id) ?? now;
          imbalanced.set(id, since);
          if (now - since >= this.#preferredDelayMs) next = preferred;
          else wakeAt = Math.min(wakeAt, since + this.#preferredDelayMs);
        }
        if (next === null) continue;
        const key = this.#keys.partition(name, record.partition);
        changes.push({
          compare: { key, target: "mod", revision: modRevision },
          op: { type: "put", key, value: encodePartitionRecord(next) },
          why: `${name}/${record.partition}: leader ${record.leaderId} -> ${next.leaderId}, epoch ${next.leaderEpoch}, ISR [${next.isr.join(",")}]`,
        });
      }
    }
    this.#imbalanced = imbalanced;
    this.#wakeUpAt(wakeAt);
    return changes;
  }

  /** One timer for every waiting preferred leader: a pass when the earliest is due. */
  #wakeUpAt(at: number): void {
    if (at >= this.#wakeAt && this.#wakeTimer !== null) return;
    if (this.#wakeTimer !== null) clearTimeout(this.#wakeTimer);
    this.#wakeTimer = null;
    this.#wakeAt = at;
    if (at === Number.POSITIVE_INFINITY || this.#stopped) return;
    this.#wakeTimer = setTimeout(
      () => {
        this.#wakeTimer = null;
        this.#wakeAt = Number.POSITIVE_INFINITY;
        this.reconcile();
      },
      Math.max(0, at - performance.now()) + 1,
    );
    this.#wakeTimer.unref();
  }

  /** False when deposed. A failed compare on a record just means another pass. */
  async #write(changes: Change[]): Promise<boolean> {
    const guard: MetaCompare = { key: this.#keys.controller, target: "create", revision: this.epoch };
    for (let i = 0; i < changes.length && !this.#stopped; i += RECORDS_PER_TXN) {
      const chunk = changes.slice(i, i + RECORDS_PER_TXN);
      const compares = [guard];
      for (const c of chunk) if (c.compare.key !== guard.key) compares.push(c.compare);
      const res = await this.#store.txn(
        compares,
        chunk.map((c) => c.op),
      );
      if (res.succeeded) {
        for (const c of chunk) if (c.why !== undefined) this.#log.info(`controller: ${c.why}`);
        continue;
      }
      const controller = await this.#store.get(this.#keys.controller);
      if (controller?.createRevision !== this.epoch) {
        this.#log.warn(`controller: epoch ${this.epoch} deposed, stopping`);
        this.#stopped = true;
        this.#markDeposed();
        return false;
      }
      // A record moved under us: decide again once the view has caught up with the store.
      // (Keys of other clusters in the same etcd also move the revision: the wait is bounded.)
      await this.#cache.waitFor(() => this.#cache.revision >= res.revision, 500);
      this.#again = true;
      return true;
    }
    return true;
  }
}
