/**
 * Slows down password guessing. Failed authentications are counted per client address (an IPv6
 * address by its /64, address-key.ts) and per claimed user name. Past `freeFailures`, each
 * further attempt under that address or name waits its turn: attempts are spaced by a delay that
 * doubles with each failure, up to a maximum, so a guesser gets a few tries a minute however many
 * connections it opens. A success clears the user's count (not the address's: one good password
 * must not buy an address fresh guesses at others). Counts are forgotten after `forgetAfterMs`
 * without a failure.
 *
 * How a session uses it: before it evaluates a message that carries credentials, it waits
 * `admit(address, user)` ms; on failure it calls `failure(address, user)`, holds its error answer
 * for the ms returned (a client that reconnects in a loop is slowed too), then closes; on success
 * it calls `success(address, user)`.
 *
 * Memory is bounded: each table keeps at most `maxEntries` keys, the least recently touched going
 * first (a flood of addresses can push its own entries out, never grow the broker). Nothing here
 * owns a timer: the broker's one ticker calls `sweep()` every interval, which drops forgotten
 * entries and reports the interval's failures in one summary, not one log line per failure.
 */
import { addressKey } from "./address-key.js";

export interface AuthFailureSummary {
  /** Failures since the last sweep. */
  readonly failures: number;
  /** Distinct address keys and user names among them (of those still tracked). */
  readonly addresses: number;
  readonly users: number;
  /** The address key with the most failures in the interval, and how many. */
  readonly topAddress: string;
  readonly topAddressFailures: number;
}

export interface AuthFailureLimiterOptions {
  freeFailures?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  forgetAfterMs?: number;
  maxEntries?: number;
  /** Called by sweep() when the interval saw failures: the one log line. */
  report?: (summary: AuthFailureSummary) => void;
  now?: () => number;
}

interface Entry {
  failures: number;
  /** The earliest time the next attempt under this key is evaluated. */
  nextAt: number;
  lastFailure: number;
  /** Failures since the last sweep. */
  recent: number;
}

export class AuthFailureLimiter {
  readonly freeFailures: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly forgetAfterMs: number;
  readonly maxEntries: number;
  readonly #report: (summary: AuthFailureSummary) => void;
  readonly #now: () => number;
  readonly #addresses = new Map<string, Entry>();
  readonly #users = new Map<string, Entry>();
  #recent = 0;

  constructor(options: AuthFailureLimiterOptions = {}) {
    this.freeFailures = options.freeFailures ?? 3;
    this.baseDelayMs = options.baseDelayMs ?? 250;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.forgetAfterMs = options.forgetAfterMs ?? 15 * 60_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.#report = options.report ?? (() => {});
    this.#now = options.now ?? (() => performance.now());
  }

  /** Keys tracked (addresses + users): what the memory bound applies to. */
  get size(): number {
    return this.#addresses.size + this.#users.size;
  }

  /** The spacing between attempts after `failures` failures. */
  delayAfter(failures: number): number {
    if (failures <= this.freeFailures) return 0;
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(failures - this.freeFailures - 1, 30));
  }

  /** Ms to wait before evaluating an attempt from `address` as `user` (null before the name is known). */
  admit(address: string, user: string | null): number {
    const now = this.#now();
    let wait = this.#book(this.#addresses.get(addressKey(address)), now);
    if (user !== null) wait = Math.max(wait, this.#book(this.#users.get(user), now));
    return wait;
  }

  /** Counts a failure; returns the ms to hold the failure's answer. */
  failure(address: string, user: string | null): number {
    const now = this.#now();
    this.#recent++;
    const delay = this.#count(this.#addresses, addressKey(address), now);
    if (user !== null) this.#count(this.#users, user, now);
    return delay;
  }

  success(_address: string, user: string): void {
    this.#users.delete(user);
  }

  /** Once per interval, from the broker's ticker: report the interval's failures, forget old entries. */
  sweep(): void {
    const now = this.#now();
    let top = "";
    let topFailures = 0;
    let addresses = 0;
    let users = 0;
    for (const [key, entry] of this.#addresses) {
      if (entry.recent > 0) addresses++;
      if (entry.recent > topFailures) {
        top = key;
        topFailures = entry.recent;
      }
      this.#age(this.#addresses, key, entry, now);
    }
    for (const [key, entry] of this.#users) {
      if (entry.recent > 0) users++;
      this.#age(this.#users, key, entry, now);
    }
    if (this.#recent > 0) {
      this.#report({
        failures: this.#recent,
        addresses,
        users,
        topAddress: top,
        topAddressFailures: topFailures,
      });
    }
    this.#recent = 0;
  }

  #age(table: Map<string, Entry>, key: string, entry: Entry, now: number): void {
    entry.recent = 0;
    if (now - entry.lastFailure >= this.forgetAfterMs) table.delete(key);
  }

  /** Takes the next slot of a key under penalty: attempts are spaced, not let through together. */
  #book(entry: Entry | undefined, now: number): number {
    if (entry === undefined) return 0;
    const delay = this.delayAfter(entry.failures);
    if (delay === 0) return 0;
    const slot = Math.max(entry.nextAt, now);
    entry.nextAt = slot + delay;
    return slot - now;
  }

  #count(table: Map<string, Entry>, key: string, now: number): number {
    let entry = table.get(key);
    if (entry === undefined) {
      if (table.size >= this.maxEntries) {
        const oldest = table.keys().next();
        if (oldest.done !== true) table.delete(oldest.value);
      }
      entry = { failures: 0, nextAt: now, lastFailure: now, recent: 0 };
    } else {
      // Re-inserted so that the map's order is least recently failed first.
      table.delete(key);
    }
    table.set(key, entry);
    entry.failures++;
    entry.recent++;
    entry.lastFailure = now;
    const delay = this.delayAfter(entry.failures);
    entry.nextAt = Math.max(entry.nextAt, now + delay);
    return delay;
  }
}
