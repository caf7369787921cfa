/**
 * A group request the coordinator holds until the group moves on (a join until its rebalance
 * completes, a Kafka SyncGroup until the leader's assignment arrives), told when the connection
 * that sent it closes.
 */
import type { ConchError } from "../format/errors.js";
import { AbortTarget, subscribe, unsubscribe } from "./abort-fanout.js";

export class GroupWait<T> extends AbortTarget {
  readonly #resolve: (result: T) => void;
  readonly #reject: (err: ConchError) => void;
  readonly #abandoned: () => void;

  constructor(resolve: (result: T) => void, reject: (err: ConchError) => void, abandoned: () => void) {
    super();
    this.#resolve = resolve;
    this.#reject = reject;
    this.#abandoned = abandoned;
  }

  /**
   * Listens to the connection's signal through the fan-out (abort-fanout.ts): a listener per wait
   * on the signal tripped MaxListenersExceededWarning once ten joins were pipelined.
   */
  watch(signal: AbortSignal | undefined): void {
    if (signal?.aborted) queueMicrotask(() => this.signalAborted());
    else if (signal !== undefined) subscribe(signal, this);
  }

  resolve(result: T): void {
    unsubscribe(this);
    this.#resolve(result);
  }

  reject(err: ConchError): void {
    unsubscribe(this);
    this.#reject(err);
  }

  signalAborted(): void {
    this.#abandoned();
  }
}
