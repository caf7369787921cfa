/**
 * One abort listener per shared signal, fanning out to a Set of callbacks. A connection's or a
 * topic's signal may have thousands of long polls waiting on it; EventTarget's add/removeEventListener
 * are linear in the listeners already there, so one listener per wait made a pile of waits quadratic
 * (and tripped Node's MaxListenersExceededWarning). Here adding and removing a wait is O(1).
 */
interface Fanout {
  readonly callbacks: Set<() => void>;
  readonly listener: () => void;
}

const fanouts = new WeakMap<AbortSignal, Fanout>();

/**
 * Calls `callback` once when `signal` aborts, unless the returned function is called first (it
 * unsubscribes). An already aborted signal is the caller's to check: nothing is called for it.
 * The shared listener is removed with the last subscription, so an idle signal holds nothing.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let fanout = fanouts.get(signal);
  if (fanout === undefined) {
    const callbacks = new Set<() => void>();
    const listener = (): void => {
      fanouts.delete(signal);
      // Copied first: a callback may unsubscribe others while we walk.
      for (const cb of [...callbacks]) if (callbacks.delete(cb)) cb();
    };
    fanout = { callbacks, listener };
    fanouts.set(signal, fanout);
    signal.addEventListener("abort", listener, { once: true });
  }
  const { callbacks, listener } = fanout;
  callbacks.add(callback);
  return () => {
    if (!callbacks.delete(callback) || callbacks.size > 0) return;
    if (fanouts.get(signal)?.callbacks === callbacks) fanouts.delete(signal);
    signal.removeEventListener("abort", listener);
  };
}

/** Callbacks currently registered on `signal` through onAbort (for tests). */
export function abortListenerCount(signal: AbortSignal): number {
  return fanouts.get(signal)?.callbacks.size ?? 0;
}
