/**
 * The small interface cluster mode needs from its metadata store (etcd), so that nothing above it
 * knows the client library: one lease per broker (registration and candidacy share it), reads of a
 * prefix at a revision, watches from a revision, and guarded transactions (compare-and-swap).
 * Revisions are etcd's: one counter for the whole store, so "read at R, watch from R + 1" misses
 * and repeats nothing.
 */

export interface MetaEntry {
  readonly key: string;
  readonly value: string;
  /** The revision at which the key was created (0 for an absent key in a comparison). */
  readonly createRevision: number;
  /** The revision of the key's last write. */
  readonly modRevision: number;
}

export interface MetaSnapshot {
  /** The store's revision the entries were read at. */
  readonly revision: number;
  readonly entries: readonly MetaEntry[];
}

export type MetaEvent =
  | { readonly type: "put"; readonly entry: MetaEntry }
  | { readonly type: "delete"; readonly key: string; readonly modRevision: number };

/** A condition of a transaction: the key's create or mod revision equals a value (0: absent). */
export interface MetaCompare {
  readonly key: string;
  readonly target: "create" | "mod";
  readonly revision: number;
}

export type MetaOp =
  | { readonly type: "put"; readonly key: string; readonly value: string; readonly leased?: MetaSession }
  | { readonly type: "delete"; readonly key: string; readonly prefix?: boolean };

export interface MetaTxnResult {
  readonly succeeded: boolean;
  /** The store's revision after the transaction (the create revision of keys it created). */
  readonly revision: number;
}

export interface SessionListener {
  /**
   * The store answered a keepalive; the lease is good until at least `validUntil` on
   * performance.now()'s clock (the time the keepalive was sent plus the TTL: the store counts from
   * when it received it, which is later).
   */
  renewed(validUntil: number): void;
  /**
   * The store says the lease is gone (expired or revoked). Only the store's word: a keepalive
   * unanswered for however long is not a lost lease (etcd's new leader extends every lease after
   * an election), and the session keeps trying.
   */
  lost(reason: Error): void;
}

/** A lease kept alive until revoked or lost. */
export interface MetaSession {
  readonly leaseId: string;
  readonly ttlSeconds: number;
  /** Ends the lease at once: every key under it is deleted. */
  revoke(): Promise<void>;
  /** Stops keeping the lease alive without revoking it (it expires after its TTL). */
  release(): void;
  /**
   * Asks the store (any member) how long the lease has left: whole seconds, rounded down; -1 when
   * the store holds no such lease (expired or revoked). Rejects when no answer came within
   * `timeoutMs`.
   */
  timeToLive(timeoutMs: number): Promise<number>;
}

export interface MetaWatch {
  cancel(): Promise<void>;
}

export interface WatchListener {
  /** Events in revision order; one call per store answer. */
  events(events: readonly MetaEvent[]): void;
  /** The watch cannot go on (e.g. its start revision was compacted away): read again and rewatch. */
  failed(err: Error): void;
}

export interface MetaStore {
  openSession(ttlSeconds: number, listener: SessionListener): Promise<MetaSession>;
  /** Every key under the prefix, at one revision. */
  getPrefix(prefix: string): Promise<MetaSnapshot>;
  get(key: string): Promise<MetaEntry | undefined>;
  watchPrefix(prefix: string, fromRevision: number, listener: WatchListener): Promise<MetaWatch>;
  /** Runs `ops` when every comparison holds, else nothing. */
  txn(compares: readonly MetaCompare[], ops: readonly MetaOp[]): Promise<MetaTxnResult>;
  close(): void;
}
