import assert from "node:assert/strict";
import { test } from "node:test";
import { Producer } from "../../src/client/producer.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { ApiKey } from "../../src/protocol/api.js";
import { decodeProduceRequest, encodeProduceResponse } from "../../src/protocol/produce.js";
import { FakeBroker, type FakeRequest } from "../client/fake-broker.js";

test("batches in flight when the connection drops are stored in send order when their ids cross a multiple of 256", async (t) => {
  const stored: string[] = [];
  let hold = false;
  let offset = 0;
  const fake = await FakeBroker.start(t, (req: FakeRequest) => {
    if (req.apiKey !== ApiKey.PRODUCE || hold) return;
    const produce = decodeProduceRequest(req.frame);
    const c = new RecordCursor(produce.records);
    const base = offset;
    while (c.next()) {
      stored.push(c.value().toString());
      offset++;
    }
    req.conn.socket.write(
      encodeProduceResponse(req.correlationId, { baseOffset: base, lastOffset: offset - 1 }),
    );
  });
  const producer = new Producer({ brokers: [fake.address], reconnectBackoffMs: 5 }, { maxInFlight: 20 });
  t.after(() => producer.close());
  const expected: string[] = [];
  // Id 1 is the handshake's: these take ids 2 to 248.
  for (let i = 0; i < 247; i++) {
    expected.push(`a${i}`);
    await producer.send("t", { value: `a${i}`, partition: 0 });
  }
  hold = true;
  const held: Array<Promise<unknown>> = [];
  // Ids 249 to 264: one batch each, all in flight at once, across id 256.
  for (let i = 0; i < 16; i++) {
    expected.push(`b${i}`);
    held.push(producer.send("t", { value: `b${i}`, partition: 0 }));
    await fake.waitForRequests(247 + i + 1);
  }
  hold = false;
  fake.dropConnections();
  await Promise.all(held);
  assert.deepEqual(stored, expected);
});
