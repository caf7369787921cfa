/**
 * Reads from segment files are made into buffers that are reused once the response referring to
 * them is written (format/read-buffers.ts). A client that does not read holds its responses in
 * the socket: the buffers they refer to must not serve other reads meanwhile, or it would be sent
 * other offsets' bytes once it reads.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import * as p from "../../src/protocol/index.js";
import { batchOf, recordsOf, startServer, until } from "./helpers.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const BATCHES = 48;
const VALUE_BYTES = 250 * KiB;

/** Batch i's one record: its index, then filler that differs from batch to batch. */
function valueAt(i: number): string {
  return `${i}:`.padEnd(VALUE_BYTES, String.fromCharCode(0x41 + (i % 26)));
}

function fetchAt(id: number, offset: number): Buffer {
  return p.encodeFetchRequest(id, {
    topic: "t",
    partition: 0,
    offset,
    maxBytes: MiB,
    maxWaitMs: 0,
    minBytes: 0,
  });
}

test("concurrent fetches from disk get their own bytes while a slow reader's responses are pending", {
  timeout: 60_000,
}, async (t) => {
  const f = await startServer(
    t,
    { maxBatchBytes: 512 * KiB, segmentBytes: 64 * MiB },
    { maxInflightBytes: 64 * MiB, maxQueuedResponseBytes: 256 * MiB, maxFetchBytes: MiB },
  );
  await f.broker.createTopic("t", 1);
  const producer = await f.client();
  for (let i = 0; i < BATCHES; i++) {
    await producer.call((id) =>
      p.encodeProduceRequest(id, {
        topic: "t",
        partition: 0,
        acks: 1,
        timeoutMs: 0,
        records: batchOf([valueAt(i)]),
      }),
    );
  }
  // The first 24 batches (6 MB) are past the 4 MiB tail cache: every fetch of them reads the file.
  const slow = await f.client();
  slow.socket.pause();
  const asked: [number, number][] = [];
  for (let offset = 0; offset < 24; offset++) {
    const id = slow.id();
    asked.push([id, offset]);
    slow.send(fetchAt(id, offset));
  }
  await until(() => f.server.queuedResponseBytes >= 16 * MiB, "the slow reader's responses to queue");

  // Another client reads the same range over and over, in the other order, meanwhile.
  const fast = await f.client();
  for (let round = 0; round < 3; round++) {
    for (let offset = 23; offset >= 0; offset--) {
      const got = p.decodeFetchResponse(await fast.call((id) => fetchAt(id, offset)));
      const records = recordsOf(got.records);
      assert.ok(records.length >= 1);
      for (const [o, v] of records) assert.ok(v === valueAt(o), `fast reader: offset ${o}`);
    }
  }

  slow.socket.resume();
  for (const [id, offset] of asked) {
    const got = p.decodeFetchResponse(await slow.response(id));
    const records = recordsOf(got.records);
    assert.equal(records[0]?.[0], offset);
    for (const [o, v] of records) assert.ok(v === valueAt(o), `slow reader: offset ${o} asked at ${offset}`);
  }
});
