/** Committed offsets in `__consumer_offsets`: durable, replayed at startup, deleted with tombstones. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  decodeOffsetKey,
  decodeOffsetValue,
  encodeOffsetKey,
  encodeOffsetValue,
} from "../../src/broker/offset-record.js";
import { OFFSETS_TOPIC } from "../../src/broker/offset-store.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { openBroker, tempDir } from "./helpers.js";

test("offset records: the documented bytes, and round trips", () => {
  const key = encodeOffsetKey("billing", "orders", 1);
  assert.equal(key.toString("hex"), "0001" + "000762696c6c696e67" + "00066f7264657273" + "00000001");
  assert.deepEqual(decodeOffsetKey(key), { group: "billing", topic: "orders", partition: 1 });
  const value = encodeOffsetValue(43, 1_700_000_000_000);
  assert.equal(value.toString("hex"), "0001" + "000000000000002b" + "0000018bcfe56800");
  assert.deepEqual(decodeOffsetValue(value), { offset: 43, timestampMs: 1_700_000_000_000 });
  // Another version, or bytes that do not hold together, are not read as offsets.
  const v2 = Buffer.from(key);
  v2[1] = 2;
  assert.equal(decodeOffsetKey(v2), null);
  assert.equal(decodeOffsetKey(key.subarray(0, key.length - 1)), null);
  assert.equal(decodeOffsetValue(value.subarray(1)), null);
});

test("a broker whose clients never commit has no offsets topic", async (t) => {
  const broker = await openBroker(t);
  await broker.createTopic("orders", 1);
  assert.deepEqual(broker.listTopics(), ["orders"]);
});

test("committed offsets survive a restart; the topic is compacted and internal", async (t) => {
  const dir = await tempDir(t);
  const first = await openBroker(t, dir);
  await first.createTopic("orders", 3);
  await first.groups.commit("billing", "", 0, [
    { topic: "orders", partition: 0, offset: 5 },
    { topic: "orders", partition: 2, offset: 9 },
  ]);
  await first.groups.commit("billing", "", 0, [{ topic: "orders", partition: 0, offset: 7 }]);
  await first.groups.commit("audit", "", 0, [{ topic: "orders", partition: 1, offset: 1 }]);
  const d = first.describeTopic(OFFSETS_TOPIC);
  assert.equal(d.internal, true);
  assert.equal(d.configs["cleanup.policy"], "compact");
  assert.equal(d.partitions.length, 1);
  // Every commit is one record per partition, the newest last.
  const log = first.partition(OFFSETS_TOPIC, 0);
  const { records } = await log.read(0, 1 << 20);
  const seen: string[] = [];
  const c = new RecordCursor(records);
  while (c.next()) {
    const k = decodeOffsetKey(c.key()!)!;
    seen.push(`${k.group}/${k.topic}/${k.partition}=${decodeOffsetValue(c.value())!.offset}`);
  }
  assert.deepEqual(seen, [
    "billing/orders/0=5",
    "billing/orders/2=9",
    "billing/orders/0=7",
    "audit/orders/1=1",
  ]);
  await first.close();

  const second = await openBroker(t, dir);
  assert.deepEqual(second.groups.fetchOffsets("billing", []), [
    { topic: "orders", partition: 0, offset: 7 },
    { topic: "orders", partition: 2, offset: 9 },
  ]);
  assert.deepEqual(
    second.groups.listGroups().map((g) => g.group),
    ["audit", "billing"],
  );
  // Deleting a group writes tombstones: it stays deleted after the next restart.
  await second.groups.deleteGroup("billing");
  await second.close();

  const third = await openBroker(t, dir);
  assert.deepEqual(third.groups.fetchOffsets("billing", []), []);
  assert.deepEqual(third.groups.fetchOffsets("audit", []), [{ topic: "orders", partition: 1, offset: 1 }]);
  assert.deepEqual(third.groups.listGroups(), [
    { group: "audit", kind: "native", protocolType: "", state: "Empty", members: 0 },
  ]);
});

test("after compaction of __consumer_offsets a restart still finds the latest offsets, and no deleted group", async (t) => {
  const dir = await tempDir(t);
  const first = await openBroker(t, dir, { segmentBytes: 1024 });
  await first.createTopic("orders", 2);
  for (let i = 1; i <= 60; i++) {
    await first.groups.commit("billing", "", 0, [
      { topic: "orders", partition: 0, offset: i },
      { topic: "orders", partition: 1, offset: 2 * i },
    ]);
    if (i <= 10) await first.groups.commit("gone", "", 0, [{ topic: "orders", partition: 0, offset: i }]);
  }
  await first.groups.deleteGroup("gone");
  // Fill the active segment so that the tombstones are in a closed one too.
  for (let i = 0; i < 10; i++)
    await first.groups.commit("billing", "", 0, [{ topic: "orders", partition: 1, offset: 120 }]);
  const log = first.partition(OFFSETS_TOPIC, 0);
  const result = await log.compact(Date.now());
  assert.ok(result.recordsRemoved > 0, "compaction removed superseded commits");
  await first.close();

  const second = await openBroker(t, dir, { segmentBytes: 1024 });
  assert.deepEqual(second.groups.fetchOffsets("billing", []), [
    { topic: "orders", partition: 0, offset: 60 },
    { topic: "orders", partition: 1, offset: 120 },
  ]);
  assert.deepEqual(second.groups.fetchOffsets("gone", []), []);
  assert.deepEqual(
    second.groups.listGroups().map((g) => g.group),
    ["billing"],
  );
});
