/**
 * The assignment of Kafka's standard "consumer" protocol type, which every Kafka consumer client
 * sends in its leader's SyncGroup (opaque to the coordinator otherwise). Decoded only to show who
 * owns what (`conch group describe`, lag per owner); never trusted for anything else.
 *
 *   assignment = version int16 | topics [topic string | partitions [int32]] | user_data nullable bytes
 *
 * Strings are an int16 length and UTF-8 bytes, arrays an int32 count; every version so far (0-3)
 * starts this way, and later versions only add fields after these.
 */
import type { TopicPartitions } from "./group-member.js";

/** The partitions per topic, or null when the bytes are not a consumer assignment. */
export function decodeConsumerAssignment(bytes: Uint8Array): TopicPartitions[] | null {
  if (bytes.length === 0) return [];
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number): boolean => at + n <= b.length;
  if (!need(2 + 4) || b.readInt16BE(0) < 0) return null;
  at = 2;
  const topicCount = b.readInt32BE(at);
  at += 4;
  // Each topic takes at least 6 bytes: a count past that is not what it claims.
  if (topicCount < 0 || topicCount > (b.length - at) / 6) return null;
  const out: TopicPartitions[] = [];
  for (let i = 0; i < topicCount; i++) {
    if (!need(2)) return null;
    const len = b.readInt16BE(at);
    at += 2;
    if (len < 0 || !need(len + 4)) return null;
    const topic = b.toString("utf8", at, at + len);
    at += len;
    const n = b.readInt32BE(at);
    at += 4;
    if (n < 0 || !need(n * 4)) return null;
    const partitions: number[] = [];
    for (let j = 0; j < n; j++, at += 4) partitions.push(b.readInt32BE(at));
    partitions.sort((x, y) => x - y);
    out.push({ topic, partitions });
  }
  out.sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : 0));
  return out;
}
