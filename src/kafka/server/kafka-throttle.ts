/**
 * Quotas on the Kafka listener (docs/kafka.md "Quotas", docs/security.md "Quotas"): the native
 * session's QuotaManager, applied as Kafka applies it. Every request counts against the request
 * rate, a produce's frame against the produce rate when it arrives, a fetch's response against the
 * fetch rate when it is ready. The longest throttle is written into a Produce or Fetch response's
 * throttle_time_ms, and the connection is muted (not read) that long; a client of a version from
 * before KIP-219 (Produce < 6, Fetch < 8) does not wait by itself, so its response is also held.
 * Data is delayed, never refused. Only while a quota is set: without one nothing is counted.
 */
import type { QuotaManager } from "../../security/quota-manager.js";
import { ApiKey } from "../protocol/api-keys.js";
import type { KafkaRequestHeader } from "../protocol/frame.js";
import { clientWaitsOutThrottle, setThrottleTime } from "../protocol/throttle-time.js";
import type { KafkaReply, KafkaResponse } from "./kafka-handler.js";

/** What a throttle needs of the connection: FramedConnection.throttle. */
export interface Mutable {
  throttle(ms: number): void;
}

/** Counts a request against the quotas; returns its reply, stamped and held as the quotas say. */
export function throttledReply(
  quotas: QuotaManager,
  conn: Mutable,
  principal: string,
  h: KafkaRequestHeader,
  frameBytes: number,
  reply: KafkaReply,
): KafkaReply {
  const clientId = h.clientId ?? "";
  let ms = quotas.recordRequest(principal, clientId);
  if (h.apiKey === ApiKey.PRODUCE) ms = Math.max(ms, quotas.recordProduce(principal, clientId, frameBytes));
  if (h.apiKey !== ApiKey.FETCH || reply === null) return hold(conn, h, reply, ms);
  if (!(reply instanceof Promise)) {
    return hold(conn, h, reply, Math.max(ms, quotas.recordFetch(principal, clientId, responseBytes(reply))));
  }
  return reply.then((r) =>
    r === null
      ? null
      : hold(conn, h, r, Math.max(ms, quotas.recordFetch(principal, clientId, responseBytes(r)))),
  );
}

function hold(conn: Mutable, h: KafkaRequestHeader, reply: KafkaReply, ms: number): KafkaReply {
  if (ms <= 0) return reply;
  conn.throttle(ms);
  const stamped = reply instanceof Promise ? reply.then((r) => stamp(h, r, ms)) : stamp(h, reply, ms);
  if (clientWaitsOutThrottle(h.apiKey, h.apiVersion)) return stamped;
  return new Promise((resolve) => setTimeout(resolve, ms, stamped));
}

/** The throttle time goes into the first piece: it holds the header and the body's first fields. */
function stamp(h: KafkaRequestHeader, reply: KafkaResponse | null, ms: number): KafkaResponse | null {
  const first = reply === null || Buffer.isBuffer(reply) ? reply : (reply[0] ?? null);
  if (first !== null) setThrottleTime(h.apiKey, h.apiVersion, first, ms);
  return reply;
}

function responseBytes(reply: KafkaResponse): number {
  if (Buffer.isBuffer(reply)) return reply.length;
  let bytes = 0;
  for (const piece of reply) bytes += piece.length;
  return bytes;
}
