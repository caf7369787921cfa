/**
 * A broker's candidacy for controller: it runs for the controller key under its lease whenever no
 * controller holds it, acts as controller (Controller) in the epoch its campaign won, stands down
 * while fenced and resumes in the same epoch once the fence lifts, as long as that lease lives.
 */
import type { BrokerLease } from "./broker-lease.js";
import { Controller, type ControllerLog } from "./controller.js";
import type { MetaSession, MetaStore } from "./etcd/meta-store.js";
import type { ControllerInfo, MetadataCache } from "./metadata-cache.js";
import type { MetadataKeys } from "./metadata-keys.js";
import { encodeControllerRecord } from "./metadata-records.js";

export class ControllerCandidacy {
  readonly #brokerId: number;
  readonly #store: MetaStore;
  readonly #cache: MetadataCache;
  readonly #keys: MetadataKeys;
  readonly #log: ControllerLog;
  readonly #lease: BrokerLease;
  #controller: Controller | null = null;
  #campaigning = false;
  /**
   * The controller epoch this broker's campaign won, under which lease: a fence stops the
   * Controller, and the lifted fence resumes it in the same epoch while that lease lives (the key
   * is still this broker's, so no other broker runs for it).
   */
  #won: { readonly epoch: number; readonly session: MetaSession } | null = null;

  constructor(
    brokerId: number,
    store: MetaStore,
    cache: MetadataCache,
    keys: MetadataKeys,
    log: ControllerLog,
    lease: BrokerLease,
  ) {
    this.#brokerId = brokerId;
    this.#store = store;
    this.#cache = cache;
    this.#keys = keys;
    this.#log = log;
    this.#lease = lease;
  }

  /** The controller this broker runs now, if it is the controller. */
  get controller(): Controller | null {
    return this.#controller;
  }

  /** Has the controller (if this broker runs it) look at the metadata again. */
  reconcile(): void {
    this.#controller?.reconcile();
  }

  /** The controller key changed: an epoch of this broker's that ended stops, and none runs for it. */
  changed(info: ControllerInfo | null): void {
    const mine = this.#controller;
    if (mine !== null && (info === null || info.epoch !== mine.epoch)) {
      this.#log.warn(`controller epoch ${mine.epoch} ended`);
      void mine.stop();
      this.#controller = null;
    }
    if (this.#won !== null && info?.epoch !== this.#won.epoch) this.#won = null;
    if (info === null) this.campaign();
  }

  /** Fenced: the controller stops acting (its epoch stays won, for `resume`). */
  standDown(): void {
    const c = this.#controller;
    this.#controller = null;
    void c?.stop();
  }

  /**
   * The fence lifted. The fence stopped the controller (or came before a campaign): without this, a
   * broker whose fence lifted keeps the controller key and no broker acts as controller until its
   * lease ends.
   */
  resume(): void {
    this.#takeControl();
    if (this.#controller === null && this.#cache.controller === null) this.campaign();
  }

  async stop(): Promise<void> {
    await this.#controller?.stop();
  }

  campaign(): void {
    const session = this.#lease.session;
    if (this.#campaigning || this.#lease.fenced || session === null || this.#lease.closed) return;
    this.#campaigning = true;
    this.#store
      .txn(
        [{ key: this.#keys.controller, target: "create", revision: 0 }],
        [
          {
            type: "put",
            key: this.#keys.controller,
            value: encodeControllerRecord(this.#brokerId),
            leased: session,
          },
        ],
      )
      .then((res) => {
        if (!res.succeeded || session !== this.#lease.session) return;
        // The key was created by this txn, so its create_revision is the txn's revision. Fenced
        // meanwhile, the broker acts on it once the fence lifts.
        this.#won = { epoch: res.revision, session };
        this.#takeControl();
      })
      .catch((err: unknown) => this.#log.warn(`controller campaign failed: ${(err as Error).message}`))
      .finally(() => {
        this.#campaigning = false;
        // The controller may have gone while the txn ran (a lost race with a dying controller).
        if (this.#cache.controller === null && this.#controller === null)
          setTimeout(() => this.campaign(), 100).unref();
      });
  }

  /** Acts as controller in the epoch its campaign won, if that lease still holds and is not fenced. */
  #takeControl(): void {
    const won = this.#won;
    if (won === null || this.#controller !== null || this.#lease.fenced || this.#lease.closed) return;
    const current = this.#cache.controller;
    if (won.session !== this.#lease.session || (current !== null && current.epoch !== won.epoch)) {
      this.#won = null;
      return;
    }
    const controller = new Controller(won.epoch, this.#store, this.#cache, this.#keys, this.#log);
    this.#controller = controller;
    this.#log.info(`broker ${this.#brokerId} is the controller (epoch ${won.epoch})`);
    void controller.deposed.then(() => {
      if (this.#controller === controller) this.#controller = null;
      if (this.#won?.epoch === won.epoch) this.#won = null;
    });
    controller.reconcile();
  }
}
