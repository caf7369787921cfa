import type { Producer } from "../types.js";

/**
 * Sends `total` messages through one producer in calls of `batch.length`, keeping up to `inFlight`
 * calls unacknowledged (1 = stop-and-wait): whenever a call is acknowledged, the next one starts.
 * The same payload buffers are reused for every call: the content does not matter to any of the
 * brokers, and no client mutates what it is given. Resolves once every call is acknowledged;
 * rejects with the first failure (no call starts after it).
 */
export function sendAll(producer: Producer, total: number, batch: Buffer[], inFlight: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let sent = 0;
    let pending = 0;
    let failure: unknown;
    let failed = false;
    const pump = (): void => {
      while (pending < inFlight && sent < total && !failed) {
        const n = Math.min(batch.length, total - sent);
        pending++;
        sent += n;
        producer.sendBatch(n === batch.length ? batch : batch.slice(0, n)).then(onAck, onFail);
      }
      if (pending > 0) return;
      if (failed) reject(failure);
      else resolve();
    };
    // One callback pair for every call: no closure or awaiting promise per call.
    const onAck = (): void => {
      pending--;
      pump();
    };
    const onFail = (err: unknown): void => {
      if (!failed) {
        failed = true;
        failure = err;
      }
      pending--;
      pump();
    };
    pump();
  });
}

/** `count` references to one payload of `bytes` bytes (random, so nothing can compress it). */
export function payloadBatch(bytes: number, count: number): Buffer[] {
  const payload = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) payload[i] = (Math.random() * 256) | 0;
  return new Array<Buffer>(count).fill(payload);
}
