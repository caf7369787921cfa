/**
 * A look at the topic before a command starts moving data. It fails fast and clearly — the broker
 * is unreachable, the topic or the partition does not exist — where the producer and consumer,
 * built to ride out a broker restart, would keep retrying.
 */
import type { Conch } from "../client/conch.js";
import { ConchError, ErrorCode } from "../format/errors.js";

/**
 * The topic's partition count. With `allowMissing`, a missing topic gives null instead of
 * UNKNOWN_TOPIC (a broker with --auto-create-topics creates it on first produce).
 */
export async function checkTopic(
  client: Conch,
  topic: string,
  partition: number | undefined,
  allowMissing = false,
): Promise<number | null> {
  let count: number;
  try {
    count = (await client.admin().describeTopic(topic)).partitions.length;
  } catch (err) {
    if (allowMissing && err instanceof ConchError && err.code === ErrorCode.UNKNOWN_TOPIC) return null;
    throw err;
  }
  if (partition !== undefined && partition >= count) {
    throw new ConchError(
      ErrorCode.UNKNOWN_PARTITION,
      `topic "${topic}" has ${count} partition${count === 1 ? "" : "s"}; there is no partition ${partition}`,
    );
  }
  return count;
}
