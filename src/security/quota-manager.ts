/**
 * Produce and fetch byte rates and request rates, per principal and per client id, enforced as
 * Kafka does: the broker never drops or refuses data for a quota; it answers the request, tells
 * the client how long it is throttled, and holds the response (and reads nothing more from the
 * connection) for that long. A client that honours the delay settles at its quota.
 *
 * Each (quota kind, principal or client id) with a quota has a token bucket holding at most one
 * window (`windowMs`) of its rate. A request takes its bytes (or 1, for the request rate) even
 * when that takes the bucket below zero; the throttle time is how long the rate needs to pay the
 * debt back, capped at `maxThrottleMs` (the debt stays, so a client that ignores the delay keeps
 * being throttled). A request counts against both its principal's and its client id's buckets;
 * the longer throttle applies.
 *
 * Quotas change live: a change bumps a generation number and each bucket re-reads its rate the
 * next time it is used. Buckets exist only for entities that have a quota, at most `maxEntries`
 * per table (the oldest goes first); `sweep()`, called by the broker's one ticker, drops buckets
 * that have been idle for `idleMs` and are full again. No timer per entry.
 *
 * A record is a map lookup and a few arithmetic operations; nothing is allocated per request once
 * the entity's bucket exists.
 */
import { ConchError, ErrorCode } from "../format/errors.js";

export interface QuotaLimits {
  readonly produceBytesPerSec?: number;
  readonly fetchBytesPerSec?: number;
  readonly requestsPerSec?: number;
}

export interface QuotaManagerOptions {
  /** The burst a bucket allows: this many ms of its rate (default 1000). */
  windowMs?: number;
  /** The longest single throttle (default 30 s). */
  maxThrottleMs?: number;
  idleMs?: number;
  maxEntries?: number;
  now?: () => number;
}

const PRODUCE = 0;
const FETCH = 1;
const REQUESTS = 2;
type Kind = typeof PRODUCE | typeof FETCH | typeof REQUESTS;
const LIMIT_OF = ["produceBytesPerSec", "fetchBytesPerSec", "requestsPerSec"] as const;

interface Bucket {
  tokens: number;
  last: number;
  /** Per ms. */
  rate: number;
  generation: number;
}

/** The quotas of one kind of entity (principals, or client ids): own limits, a default, buckets by kind. */
class EntityQuotas {
  readonly limits = new Map<string, QuotaLimits>();
  defaults: QuotaLimits | null = null;
  readonly buckets: Map<string, Bucket>[] = [new Map(), new Map(), new Map()];

  /** The entity's rate of `kind` per second, or 0 when it has none. */
  rateOf(key: string, kind: Kind): number {
    return (this.limits.get(key) ?? this.defaults)?.[LIMIT_OF[kind]] ?? 0;
  }
}

function checkLimits(limits: QuotaLimits): void {
  for (const field of LIMIT_OF) {
    const value = limits[field];
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
      throw new ConchError(
        ErrorCode.INVALID_CONFIG,
        `Quota ${field} must be a positive number, not ${value}`,
      );
    }
  }
}

export class QuotaManager {
  readonly windowMs: number;
  readonly maxThrottleMs: number;
  readonly idleMs: number;
  readonly maxEntries: number;
  readonly #now: () => number;
  readonly #principals = new EntityQuotas();
  readonly #clientIds = new EntityQuotas();
  #generation = 0;

  constructor(options: QuotaManagerOptions = {}) {
    this.windowMs = options.windowMs ?? 1000;
    this.maxThrottleMs = options.maxThrottleMs ?? 30_000;
    this.idleMs = options.idleMs ?? 60_000;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Sets (or with null removes) `principal`'s quotas; a null principal sets the default for every principal without its own. */
  setPrincipalQuota(principal: string | null, limits: QuotaLimits | null): void {
    this.#set(this.#principals, principal, limits);
  }

  /** The same for client ids. */
  setClientIdQuota(clientId: string | null, limits: QuotaLimits | null): void {
    this.#set(this.#clientIds, clientId, limits);
  }

  /** The quotas set, for the admin API: own ones by name, and the defaults. */
  quotas(): {
    principals: Record<string, QuotaLimits>;
    clientIds: Record<string, QuotaLimits>;
    principalDefault: QuotaLimits | null;
    clientIdDefault: QuotaLimits | null;
  } {
    return {
      principals: Object.fromEntries(this.#principals.limits),
      clientIds: Object.fromEntries(this.#clientIds.limits),
      principalDefault: this.#principals.defaults,
      clientIdDefault: this.#clientIds.defaults,
    };
  }

  /** Counts a produce request's bytes; returns the ms its response must be held (0: none). */
  recordProduce(principal: string, clientId: string, bytes: number): number {
    return this.#record(PRODUCE, principal, clientId, bytes);
  }

  /** Counts a fetch response's bytes; returns the ms it must be held. */
  recordFetch(principal: string, clientId: string, bytes: number): number {
    return this.#record(FETCH, principal, clientId, bytes);
  }

  /** Counts one request; returns the ms its response must be held. */
  recordRequest(principal: string, clientId: string): number {
    return this.#record(REQUESTS, principal, clientId, 1);
  }

  /** Buckets held, over every table: what `maxEntries` bounds. */
  get size(): number {
    let n = 0;
    for (const entities of [this.#principals, this.#clientIds]) for (const b of entities.buckets) n += b.size;
    return n;
  }

  /** From the broker's ticker: drops buckets idle for `idleMs` whose debt is paid. */
  sweep(): void {
    const now = this.#now();
    for (const entities of [this.#principals, this.#clientIds]) {
      for (const buckets of entities.buckets) {
        for (const [key, b] of buckets) {
          const idle = now - b.last;
          if (idle >= this.idleMs && b.tokens + idle * b.rate >= b.rate * this.windowMs) buckets.delete(key);
        }
      }
    }
  }

  #set(entities: EntityQuotas, key: string | null, limits: QuotaLimits | null): void {
    if (limits !== null) checkLimits(limits);
    const copy = limits === null ? null : { ...limits };
    if (key === null) entities.defaults = copy;
    else if (copy === null) entities.limits.delete(key);
    else entities.limits.set(key, copy);
    this.#generation++;
  }

  #record(kind: Kind, principal: string, clientId: string, amount: number): number {
    const now = this.#now();
    const a = this.#take(this.#principals, kind, principal, amount, now);
    const b = this.#take(this.#clientIds, kind, clientId, amount, now);
    return Math.max(a, b);
  }

  #take(entities: EntityQuotas, kind: Kind, key: string, amount: number, now: number): number {
    const buckets = entities.buckets[kind]!;
    let b = buckets.get(key);
    if (b === undefined || b.generation !== this.#generation) {
      const perSec = entities.rateOf(key, kind);
      if (perSec === 0) {
        if (b !== undefined) buckets.delete(key);
        return 0;
      }
      if (b === undefined) {
        if (buckets.size >= this.maxEntries) {
          const oldest = buckets.keys().next();
          if (oldest.done !== true) buckets.delete(oldest.value);
        }
        b = { tokens: perSec * (this.windowMs / 1000), last: now, rate: perSec / 1000, generation: 0 };
        buckets.set(key, b);
      }
      b.rate = perSec / 1000;
      b.generation = this.#generation;
    }
    const full = b.rate * this.windowMs;
    const refilled = b.tokens + (now - b.last) * b.rate;
    b.tokens = Math.min(refilled, full) - amount;
    b.last = now;
    if (b.tokens >= 0) return 0;
    return Math.min(Math.ceil(-b.tokens / b.rate), this.maxThrottleMs);
  }
}
