/**
 * One abort listener per shared signal, fanning out to a list of targets. A connection's signal
 * may have thousands of long polls waiting on it; EventTarget's add/removeEventListener are linear
 * in the listeners already there, so one listener per wait made a pile of waits quadratic (and
 * tripped Node's MaxListenersExceededWarning). Here subscribing and unsubscribing are O(1).
 *
 * The list is intrusive: a target carries its own links, so a wait allocates nothing to subscribe
 * or unsubscribe. (A Set per signal reallocated its table whenever it emptied, which a consumer
 * that keeps up does at every fetch.) A target is on one signal's list at a time.
 *
 * The shared listener stays on its signal until the signal aborts (a connection's signal aborts
 * when it closes), rather than leaving with the last wait: a consumer that tails a partition has
 * one long poll at a time, and re-attaching a listener for each would cost more than it keeps.
 */

/** What is told when the signal it subscribed to aborts. */
export abstract class AbortTarget {
  /** The list this target is on, and its neighbours there (managed here). */
  abortList: Fanout | null = null;
  abortPrev: AbortTarget | null = null;
  abortNext: AbortTarget | null = null;

  abstract signalAborted(): void;
}

class Fanout {
  head: AbortTarget | null = null;
  tail: AbortTarget | null = null;
  size = 0;

  push(t: AbortTarget): void {
    t.abortList = this;
    t.abortPrev = this.tail;
    t.abortNext = null;
    if (this.tail === null) this.head = t;
    else this.tail.abortNext = t;
    this.tail = t;
    this.size++;
  }

  remove(t: AbortTarget): void {
    if (t.abortPrev === null) this.head = t.abortNext;
    else t.abortPrev.abortNext = t.abortNext;
    if (t.abortNext === null) this.tail = t.abortPrev;
    else t.abortNext.abortPrev = t.abortPrev;
    t.abortList = null;
    t.abortPrev = null;
    t.abortNext = null;
    this.size--;
  }
}

/** Each signal's subscribed targets. */
const fanouts = new WeakMap<AbortSignal, Fanout>();

/**
 * Tells `target` once when `signal` aborts, unless it unsubscribes first. An already aborted
 * signal is the caller's to check: nothing is called for it. A target subscribed elsewhere moves.
 */
export function subscribe(signal: AbortSignal, target: AbortTarget): void {
  let list = fanouts.get(signal);
  if (list === undefined) {
    const all = new Fanout();
    const listener = (): void => {
      // Taken off one by one: a target may unsubscribe others while we walk.
      for (let t = all.head; t !== null; t = all.head) {
        all.remove(t);
        t.signalAborted();
      }
      fanouts.delete(signal);
    };
    list = all;
    fanouts.set(signal, all);
    signal.addEventListener("abort", listener, { once: true });
  }
  unsubscribe(target);
  list.push(target);
}

/** Takes `target` off the list it is on, if any. */
export function unsubscribe(target: AbortTarget): void {
  target.abortList?.remove(target);
}

/** Targets currently subscribed to `signal` (for tests). */
export function abortListenerCount(signal: AbortSignal): number {
  return fanouts.get(signal)?.size ?? 0;
}
