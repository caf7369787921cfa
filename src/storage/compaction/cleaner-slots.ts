/**
 * Compaction passes run one at a time per process, whatever the number of partitions: a pass holds
 * a key map of up to ~24 MiB and reads and writes whole segments, so several at once would multiply
 * memory and compete with produce and fetch for the disk and the two cores. Waiting passes go in
 * call order; a wait ends early when its log closes.
 */

const MAX_RUNNING = 1;
let running = 0;
const waiting: { grant: () => void }[] = [];

/** Resolves with a release function once a pass may run; rejects if `signal` aborts first. */
export function acquireCleanerSlot(signal: AbortSignal): Promise<() => void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  if (running < MAX_RUNNING) {
    running++;
    return Promise.resolve(releaser());
  }
  return new Promise((resolve, reject) => {
    const entry = {
      grant: (): void => {
        signal.removeEventListener("abort", onAbort);
        running++;
        resolve(releaser());
      },
    };
    const onAbort = (): void => {
      const i = waiting.indexOf(entry);
      if (i >= 0) waiting.splice(i, 1);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    waiting.push(entry);
  });
}

function releaser(): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    running--;
    waiting.shift()?.grant();
  };
}
