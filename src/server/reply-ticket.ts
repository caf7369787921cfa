/**
 * A request answered later without a promise. A handler whose answer comes from a listener (a
 * produce's append, a fetch's long poll) returns a ticket of its own kind, which is that listener:
 * one object per request where a chain of promises and closures stood. The ticket may be answered
 * before the handler returns; the connection takes it once the handler returned (`register`), and
 * an answer that came first is delivered then.
 */
import type { Reply } from "./handler.js";

/** The connection: where a ticket's answer goes. */
export interface TicketOwner {
  answered(ticket: ReplyTicket, reply: Reply): void;
  failed(ticket: ReplyTicket, err: unknown): void;
}

const WAITING = 0;
const ANSWERED = 1;
const FAILED = 2;

export class ReplyTicket {
  readonly correlationId: number;
  /** Set by the connection when it takes the ticket: the request's kind and what it counts. */
  apiKey = 0;
  cost = 0;
  /** Ms to hold the answer for a quota (set by the session). */
  holdMs = 0;
  readonly #owner: TicketOwner;
  #registered = false;
  #state = WAITING;
  #reply: Reply = null;
  #error: unknown = null;

  constructor(owner: TicketOwner, correlationId: number) {
    this.#owner = owner;
    this.correlationId = correlationId;
  }

  /** The answer: response bytes, or null for none. Later answers are ignored. */
  reply(reply: Reply): void {
    if (this.#state !== WAITING) return;
    this.#state = ANSWERED;
    if (this.#registered) this.#owner.answered(this, reply);
    else this.#reply = reply;
  }

  /** The request failed: answered with the error's code. Later answers are ignored. */
  fail(err: unknown): void {
    if (this.#state !== WAITING) return;
    this.#state = FAILED;
    if (this.#registered) this.#owner.failed(this, err);
    else this.#error = err;
  }

  /** The connection took the ticket (its handler returned): an answer that came first goes now. */
  register(): void {
    this.#registered = true;
    if (this.#state === ANSWERED) {
      const reply = this.#reply;
      this.#reply = null;
      this.#owner.answered(this, reply);
    } else if (this.#state === FAILED) {
      const err = this.#error;
      this.#error = null;
      this.#owner.failed(this, err);
    }
  }
}
