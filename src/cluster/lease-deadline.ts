/**
 * A broker's own deadline for its lease, and what each word from etcd does to it. The deadline is
 * conservative: every bound on etcd's expiry is counted from when the broker sent the question
 * (a keepalive, or LeaseTimeToLive), and etcd counts from its receipt, which is later; so a
 * broker past this deadline may have lost its lease, and one before it has not.
 *
 * A missing keepalive answer is not a lost lease: while etcd elects a new leader nobody answers,
 * and the new leader extends every lease (by its TTL and the election timeout). So once keepalive
 * answers stop coming (two of them at the usual third-of-a-TTL interval), the broker asks etcd how
 * long the lease has left, and only etcd's "no such lease" counts as lost. No answer by the
 * deadline fences the broker (it acknowledges nothing) and it goes on asking: a lease may outlive
 * an election that outlasts its TTL, and registering again under a new lease while the old one
 * lives would make the controller fail the broker's partitions over for nothing.
 */

/** What an answer to LeaseTimeToLive means. */
export type LeaseAnswer = "extended" | "unchanged" | "expired";

export class LeaseDeadline {
  readonly #ttlMs: number;
  #validUntil = 0;

  constructor(ttlSeconds: number) {
    this.#ttlMs = ttlSeconds * 1000;
  }

  /** Until when (performance.now()'s clock) the lease is surely held. */
  get validUntil(): number {
    return this.#validUntil;
  }

  /** Whether the lease is surely held at `now`: past the deadline without a word, it may not be. */
  held(now: number): boolean {
    return now < this.#validUntil;
  }

  /**
   * A keepalive was answered: etcd renewed the lease for a whole TTL from its receipt, so it holds
   * until at least `validUntil` (the keepalive's send time plus the TTL). The deadline only moves
   * forward: a keepalive's answer can come after a later LeaseTimeToLive's.
   */
  renewed(validUntil: number): void {
    this.#validUntil = Math.max(this.#validUntil, validUntil);
  }

  /**
   * When to ask etcd whether the lease lives: once two keepalives in a row (sent every third of
   * the TTL) have gone unanswered, a third of the TTL before the deadline.
   */
  askAt(): number {
    return this.#validUntil - this.#ttlMs / 3;
  }

  /**
   * etcd answered LeaseTimeToLive, asked at `sentAt`, with `seconds` left (its whole seconds,
   * rounded down; -1 when it holds no such lease). An answer above the TTL is capped at the TTL:
   * a member that has just become leader and not yet taken over the leases reports them as never
   * expiring, and the leases it takes over get a whole TTL (and more) from then on. 0 may mean
   * under a second left or just expired and not yet removed: it moves nothing, and the broker asks
   * again.
   */
  answered(sentAt: number, seconds: number): LeaseAnswer {
    if (seconds < 0) return "expired";
    const until = sentAt + Math.min(seconds * 1000, this.#ttlMs);
    if (until <= this.#validUntil) return "unchanged";
    this.#validUntil = until;
    return "extended";
  }
}
