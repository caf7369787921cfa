/**
 * A one-shot "stop waiting" for long polls: what an AbortController would do, without an
 * EventTarget per wait. A fetch that long-polls makes one per request; with AbortController and
 * its listeners each of those waits measurably pushed objects into the old generation (about 3.7
 * MB more promoted in 8 s of a consumer long-polling at 1,000 fetches a second, and a
 * mark-compact every 1.5-2 s), which showed up as pauses in produce-to-consume latency.
 *
 * One listener at a time: the wait currently parked on it.
 */
export class Wakeup {
  #woken = false;
  #listener: (() => void) | null = null;

  get woken(): boolean {
    return this.#woken;
  }

  /** Ends the current wait and every later one at once. */
  wake(): void {
    if (this.#woken) return;
    this.#woken = true;
    const listener = this.#listener;
    this.#listener = null;
    listener?.();
  }

  /** Sets (or, with null, clears) what `wake` calls. */
  listen(listener: (() => void) | null): void {
    this.#listener = listener;
  }
}
