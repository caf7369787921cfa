/**
 * One abort listener per shared signal, fanning out to a Set of callbacks. A connection's or a
 * topic's signal may have thousands of long polls waiting on it; EventTarget's add/removeEventListener
 * are linear in the listeners already there, so one listener per wait made a pile of waits quadratic
 * (and tripped Node's MaxListenersExceededWarning). Here adding and removing a wait is O(1).
 *
 * The shared listener stays on its signal until the signal aborts (a connection's signal aborts
 * when it closes, a topic's when it is deleted or the broker stops), rather than leaving with the
 * last wait: a consumer that tails a partition has one long poll at a time, so a wait now only adds
 * to and deletes from the signal's Set instead of attaching a listener, a Set and a WeakMap entry.
 * (Simpler; no change in the broker's collections was measured: docs/performance.md, third round.)
 */
/** Each signal's subscribed callbacks. */
const fanouts = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` once when `signal` aborts, unless the returned function is called first (it
 * unsubscribes). An already aborted signal is the caller's to check: nothing is called for it.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = fanouts.get(signal);
  if (callbacks === undefined) {
    const all = new Set<() => void>();
    const listener = (): void => {
      fanouts.delete(signal);
      // Copied first: a callback may unsubscribe others while we walk.
      for (const cb of [...all]) if (all.delete(cb)) cb();
    };
    callbacks = all;
    fanouts.set(signal, all);
    signal.addEventListener("abort", listener, { once: true });
  }
  callbacks.add(callback);
  return () => {
    callbacks.delete(callback);
  };
}

/** Callbacks currently registered on `signal` through onAbort (for tests). */
export function abortListenerCount(signal: AbortSignal): number {
  return fanouts.get(signal)?.size ?? 0;
}
