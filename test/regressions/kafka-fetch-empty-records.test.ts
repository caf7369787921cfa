/**
 * A Kafka fetch with nothing to return must answer an empty record set (size 0), not a null one
 * (size -1): librdkafka (kcat, confluent-kafka) fails to parse a null one ("invalid MessageSetSize
 * -1") and retries for ever, so a consumer at the end of a partition never saw the end.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { kafkaRequest, responseBody, startKafka } from "../kafka/server/kafka-harness.js";

test("a Kafka fetch at the end of a partition answers an empty record set, not a null one", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("empty", 1);
  const c = await f.client();
  c.send(
    kafkaRequest(1, 4, 1, (w) => {
      w.int32(-1); // replica id
      w.int32(0); // max wait
      w.int32(1); // min bytes
      w.int32(1 << 20);
      w.int8(0);
      w.arrayCount(1);
      w.string("empty");
      w.arrayCount(1);
      w.int32(0);
      w.int64(0);
      w.int32(1 << 20);
    }),
  );
  const r = responseBody(await c.next()).body;
  r.int32(); // throttle
  assert.equal(r.arrayCount(1), 1);
  assert.equal(r.string(), "empty");
  assert.equal(r.arrayCount(1), 1);
  assert.equal(r.int32(), 0); // partition
  assert.equal(r.int16(), 0); // error
  assert.equal(r.int64(), 0); // high watermark
  r.int64(); // last stable offset
  assert.equal(r.int32(), -1); // aborted transactions: null
  assert.equal(r.int32(), 0, "records: empty, not null");
  r.done();
});
