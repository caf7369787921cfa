import type { Producer } from "../types.js";

/**
 * Sends `total` messages through one producer in calls of `batch.length`, keeping up to `inFlight`
 * calls unacknowledged (1 = stop-and-wait). The same payload buffers are reused for every call:
 * the content does not matter to any of the brokers, and no client mutates what it is given.
 */
export async function sendAll(
  producer: Producer,
  total: number,
  batch: Buffer[],
  inFlight: number,
): Promise<void> {
  const pending: Promise<void>[] = [];
  let failure: unknown;
  const note = (err: unknown) => {
    failure ??= err;
  };
  let sent = 0;
  while (sent < total && failure === undefined) {
    const n = Math.min(batch.length, total - sent);
    pending.push(producer.sendBatch(n === batch.length ? batch : batch.slice(0, n)).catch(note));
    sent += n;
    if (pending.length >= inFlight) await pending.shift();
  }
  await Promise.all(pending);
  if (failure !== undefined) throw failure;
}

/** `count` references to one payload of `bytes` bytes (random, so nothing can compress it). */
export function payloadBatch(bytes: number, count: number): Buffer[] {
  const payload = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) payload[i] = (Math.random() * 256) | 0;
  return new Array<Buffer>(count).fill(payload);
}
