const RESOLVED = Promise.resolve();

/**
 * Runs `fn` in a microtask, in order with other microtasks. This is the cheapest way Node offers:
 * `queueMicrotask` makes an AsyncResource and a bound function per call, and `process.nextTick` a
 * tick object per call plus a Map each time the tick queue drains; a reaction on a settled promise
 * is two small objects. `fn` must not throw (a throw would surface as an unhandled rejection).
 */
export function microtask(fn: () => void): void {
  void RESOLVED.then(fn);
}
