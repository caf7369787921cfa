/**
 * Waiters for something to become idle (a write path, a group commit, a file's fsyncs): the promise
 * is made only when someone waits, so the hot path that reaches idle with no one waiting allocates
 * nothing.
 */
export class IdleWaiters {
  #promise: Promise<void> | null = null;
  #resolve: (() => void) | null = null;

  /** Settles at the next `wake`. */
  wait(): Promise<void> {
    if (this.#promise === null) {
      this.#promise = new Promise<void>((resolve) => {
        this.#resolve = resolve;
      });
    }
    return this.#promise;
  }

  /** Settles everyone waiting now; later waits wait for the next `wake`. */
  wake(): void {
    const resolve = this.#resolve;
    if (resolve === null) return;
    this.#promise = null;
    this.#resolve = null;
    resolve();
  }
}
