/**
 * What the leader-routing tests check, against in-process brokers and against broker processes
 * alike: from one bootstrap address the SDK produces to every partition of a topic whose leaders
 * differ, each partition's records are stored by its leader alone, and a consumer reads them back.
 */
import assert from "node:assert/strict";
import type { Conch } from "../../src/client/conch.js";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { TestClient } from "../server/helpers.js";

export interface RoutedBroker {
  readonly brokerId: number;
  readonly port: number;
}

/** A partition's end offset in one broker's own log, asked of that broker alone (0: it has none). */
export async function endOffsetOn(port: number, topic: string, partition: number): Promise<number> {
  const c = await TestClient.connect(port);
  try {
    await c.handshake();
    const res = p.decodeListOffsetsResponse(
      await c.call((id) =>
        p.encodeListOffsetsRequest(id, { topic, partition, spec: p.OffsetSpec.LATEST, timestampMs: 0 }),
      ),
    );
    return res.offset;
  } catch (err) {
    // A broker that holds no replica of the partition need not know the topic at all.
    if ((err as { code?: number }).code === ErrorCode.UNKNOWN_TOPIC) return 0;
    throw err;
  } finally {
    c.destroy();
  }
}

/** Values `partition-i` for i below `count`, as produced and read back by checkRouting. */
export function valuesOf(partition: number, from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, i) => `${partition}-${from + i}`);
}

/** Reads `count` messages of `topic` from the start, by partition. */
export async function readAll(conch: Conch, topic: string, count: number): Promise<Map<number, string[]>> {
  const consumer = conch.consumer({ topics: [topic], from: "earliest" });
  const seen = new Map<number, string[]>();
  let total = 0;
  try {
    if (count === 0) return seen;
    for await (const msg of consumer) {
      const list = seen.get(msg.partition) ?? [];
      list.push(msg.value.toString());
      seen.set(msg.partition, list);
      if (++total === count) break;
    }
  } finally {
    await consumer.close();
  }
  return seen;
}

export async function checkRouting(
  conch: Conch,
  topic: string,
  leaders: readonly number[],
  brokers: readonly RoutedBroker[],
  perPartition: number,
): Promise<void> {
  const producer = conch.producer();
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < perPartition; i++)
    for (let partition = 0; partition < leaders.length; partition++)
      sends.push(producer.send(topic, { partition, value: `${partition}-${i}` }));
  await Promise.all(sends);
  await producer.close();

  for (let partition = 0; partition < leaders.length; partition++) {
    for (const b of brokers) {
      const expected = b.brokerId === leaders[partition] ? perPartition : 0;
      assert.equal(
        await endOffsetOn(b.port, topic, partition),
        expected,
        `partition ${partition} (leader ${leaders[partition]}) on broker ${b.brokerId}`,
      );
    }
  }

  const seen = await readAll(conch, topic, leaders.length * perPartition);
  for (let partition = 0; partition < leaders.length; partition++)
    assert.deepEqual(
      seen.get(partition),
      valuesOf(partition, 0, perPartition),
      `partition ${partition} read back`,
    );
}
