/** The message browser's key filter: exact matches only, and a scan bounded in records examined. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { MAX_KEY_SCAN } from "../../src/http/message-browser.js";
import { call, errorCode, startHttp } from "./helpers.js";

function keyed(records: readonly [string | null, string][]): Buffer {
  const b = new BatchBuilder({ slabBytes: 1 << 20 });
  for (const [key, value] of records) b.add(value, key, Date.now());
  return Buffer.from(b.finish());
}

interface Browse {
  messages: { offset: number; key: { data: string } | null; value: { data: string } }[];
  nextOffset: number;
  scan?: { key: string; examined: number; limit: number; complete: boolean };
}

test("key= returns only the records with exactly that key, and says how much it examined", async (t) => {
  const { broker, base } = await startHttp(t);
  await broker.createTopic("k", 1);
  await broker.produce(
    "k",
    0,
    keyed([
      ["alice", "1"],
      ["bob", "2"],
      [null, "3"],
      ["alice", "4"],
      ["alicia", "5"],
    ]),
    "leader",
  );
  const r = await call(base, "GET", "/api/v1/topics/k/partitions/0/messages?key=alice");
  assert.equal(r.status, 200);
  const body = r.json as unknown as Browse;
  assert.deepEqual(
    body.messages.map((m) => [m.offset, m.value.data]),
    [
      [0, "1"],
      [3, "4"],
    ],
  );
  assert.deepEqual(body.scan, { key: "alice", examined: 5, limit: MAX_KEY_SCAN, complete: true });
  assert.equal(body.nextOffset, 5);

  const limited = (await call(base, "GET", "/api/v1/topics/k/partitions/0/messages?key=alice&limit=1"))
    .json as unknown as Browse;
  assert.deepEqual(
    limited.messages.map((m) => m.offset),
    [0],
  );
  assert.equal(limited.nextOffset, 1, "the next page starts after the match");
  assert.equal(limited.scan?.complete, false);

  const none = (await call(base, "GET", "/api/v1/topics/k/partitions/0/messages?key=carol"))
    .json as unknown as Browse;
  assert.deepEqual(none.messages, []);
  assert.equal(none.scan?.examined, 5);
  const plain = (await call(base, "GET", "/api/v1/topics/k/partitions/0/messages")).json as unknown as Browse;
  assert.equal(plain.scan, undefined, "no scan report without a key");
  const long = await call(base, "GET", `/api/v1/topics/k/partitions/0/messages?key=${"x".repeat(5000)}`);
  assert.equal(long.status, 400);
  assert.equal(errorCode(long.json), "INVALID_REQUEST");
});

test("a key scan stops after MAX_KEY_SCAN records and continues from nextOffset", async (t) => {
  const { broker, base } = await startHttp(t);
  await broker.createTopic("big", 1);
  const total = MAX_KEY_SCAN + 500;
  const perBatch = 10_000;
  for (let from = 0; from < total; from += perBatch) {
    const records: [string, string][] = [];
    for (let i = from; i < Math.min(total, from + perBatch); i++)
      records.push([i === total - 1 ? "needle" : "hay", ""]);
    await broker.produce("big", 0, keyed(records), "leader");
  }
  const first = (await call(base, "GET", "/api/v1/topics/big/partitions/0/messages?key=needle"))
    .json as unknown as Browse;
  assert.deepEqual(first.messages, []);
  assert.deepEqual(first.scan, {
    key: "needle",
    examined: MAX_KEY_SCAN,
    limit: MAX_KEY_SCAN,
    complete: false,
  });
  assert.equal(first.nextOffset, MAX_KEY_SCAN);
  const rest = (
    await call(base, "GET", `/api/v1/topics/big/partitions/0/messages?key=needle&offset=${first.nextOffset}`)
  ).json as unknown as Browse;
  assert.deepEqual(
    rest.messages.map((m) => m.offset),
    [total - 1],
  );
  assert.equal(rest.scan?.examined, 500);
  assert.equal(rest.scan?.complete, true);
});
