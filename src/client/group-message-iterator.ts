/**
 * The Consumer's message iterator, telling a group consumer which message the application holds:
 * it counts as processed once the application asks for the next. When the group consumer ended
 * with an error, the iterator throws it instead of finishing quietly.
 */
import type { ConchError } from "../format/errors.js";
import type { ConsumerMessage } from "./consumer.js";

/** What the iterator reports to. */
export interface HeldMessages {
  hold(m: ConsumerMessage): void;
  release(): void;
  /** The error that ended the group consumer, if any. */
  readonly failure: ConchError | null;
}

export class GroupMessageIterator implements AsyncIterableIterator<ConsumerMessage> {
  #inner: AsyncIterableIterator<ConsumerMessage>;
  #owner: HeldMessages;

  constructor(inner: AsyncIterableIterator<ConsumerMessage>, owner: HeldMessages) {
    this.#inner = inner;
    this.#owner = owner;
  }

  next(): Promise<IteratorResult<ConsumerMessage>> {
    this.#owner.release();
    return this.#inner.next().then(this.#took);
  }

  /** A loop that exits leaves the message in hand unprocessed (at-least-once). */
  return(): Promise<IteratorResult<ConsumerMessage>> {
    return this.#inner.return?.() ?? Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  // One bound function for every message, not a closure per message.
  #took = (r: IteratorResult<ConsumerMessage>): IteratorResult<ConsumerMessage> => {
    if (!r.done) this.#owner.hold(r.value);
    else if (this.#owner.failure !== null) throw this.#owner.failure;
    return r;
  };
}
