/** The message browser reads compressed batches: their records, with their own offsets, among plain ones. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { compressBatch } from "../../src/format/compressed-batch.js";
import { call, startHttp } from "./helpers.js";

interface Browse {
  messages: { offset: number; key: { data: string } | null; value: { data: string } }[];
  nextOffset: number;
}

test("messages of compressed batches are shown like any others, with their offsets", async (t) => {
  const { broker, base } = await startHttp(t);
  await broker.createTopic("z", 1);
  const b = new BatchBuilder({ slabBytes: 1 << 16 });
  const expected: [number, string | null, string][] = [];
  for (const codec of [0, 1, 2, 3, 4] as const) {
    for (let i = 0; i < 3; i++) {
      const key = i === 1 ? null : `k${codec}`;
      const value = `codec ${codec} record ${i}`;
      b.add(value, key, Date.now());
      expected.push([expected.length, key, value]);
    }
    await broker.produce("z", 0, compressBatch(Buffer.from(b.finish()), codec), "leader");
  }
  const r = await call(base, "GET", "/api/v1/topics/z/partitions/0/messages?limit=100");
  assert.equal(r.status, 200);
  const body = r.json as unknown as Browse;
  assert.deepEqual(
    body.messages.map((m) => [m.offset, m.key?.data ?? null, m.value.data]),
    expected,
  );
  assert.equal(body.nextOffset, 15);
  const keyed = (await call(base, "GET", "/api/v1/topics/z/partitions/0/messages?key=k3"))
    .json as unknown as Browse;
  assert.deepEqual(
    keyed.messages.map((m) => m.offset),
    [9, 11],
  );
});
