/**
 * One full garbage collection between start-up and the first client: what start-up left behind
 * (module sources, recovery's read buffers, the young generation's first survivors) is collected
 * before traffic starts instead of in the middle of the first produce burst, where it showed up as
 * 10-15 ms of pauses. Used by `conch broker` only: an application embedding the broker keeps
 * its own heap to itself.
 *
 * Node exposes `gc` only with --expose-gc; setting the flag at run time makes it available in a
 * new context (the main context is left as it is). Anything unexpected here is ignored: this is an
 * optimisation, never a reason not to start.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export function settleHeap(): void {
  try {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as unknown;
    if (typeof gc === "function") gc();
  } catch {
    // Not available on this runtime: the first traffic pays for the collection instead.
  }
}
