/**
 * The LeaseTimeToLive questions about one lease (lease-deadline.ts says what the answers mean):
 * asked once keepalive answers are overdue (LeaseDeadline.askAt), one at a time, each bounded by
 * the TTL (an answer later than that could not move the deadline past the moment it came), and
 * again a little after each until keepalive answers put the deadline out of reach once more.
 */
import type { MetaSession } from "./etcd/meta-store.js";
import type { LeaseDeadline } from "./lease-deadline.js";

/** The pause before asking again, after no answer or one that moved nothing. */
const ASK_RETRY_MS = 200;

export class LeaseQuestions {
  readonly #session: MetaSession;
  readonly #deadline: LeaseDeadline;
  /** Called with what an answer did, when it did something. */
  readonly #answered: (answer: "extended" | "expired") => void;
  #timer: NodeJS.Timeout | null = null;
  #asking = false;
  #stopped = false;

  constructor(
    session: MetaSession,
    deadline: LeaseDeadline,
    answered: (answer: "extended" | "expired") => void,
  ) {
    this.#session = session;
    this.#deadline = deadline;
    this.#answered = answered;
  }

  /** Times the next question by the deadline as it is now (a question under way times it itself). */
  arm(minWaitMs = 0): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#asking || this.#stopped) return;
    const wait = Math.max(minWaitMs, this.#deadline.askAt() - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#ask();
    }, wait);
    this.#timer.unref();
  }

  /** No more questions, and no answer acted on (the lease is lost or the broker stops). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #ask(): void {
    if (this.#asking || this.#stopped) return;
    // Renewed meanwhile, or the timer fired early by performance.now(): not overdue yet.
    if (performance.now() < this.#deadline.askAt()) {
      this.arm();
      return;
    }
    this.#asking = true;
    const sentAt = performance.now();
    this.#session
      .timeToLive(this.#session.ttlSeconds * 1000)
      .then(
        (seconds) => {
          if (this.#stopped) return;
          const answer = this.#deadline.answered(sentAt, seconds);
          if (answer !== "unchanged") this.#answered(answer);
        },
        // No answer: the deadline stands (the broker fences itself there) and it asks again.
        () => {},
      )
      .finally(() => {
        this.#asking = false;
        this.arm(ASK_RETRY_MS);
      });
  }
}
