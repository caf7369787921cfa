/**
 * A topic name no topic could have is INVALID_TOPIC_NAME wherever it is given, whatever the broker
 * holds, never UNKNOWN_TOPIC; and the SDK refuses it before sending anything.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Producer } from "../../src/client/producer.js";
import { ErrorCode } from "../../src/format/errors.js";
import { batchOf, conchError, openBroker } from "../broker/helpers.js";
import { FakeBroker } from "../client/fake-broker.js";

const BAD_NAMES = ["bad name!", "", ".", "..", "a/b", "x".repeat(250), "é"];

for (const autoCreateTopics of [false, true]) {
  test(`the broker answers INVALID_TOPIC_NAME for a bad name on produce, fetch, describe and list-offsets (autoCreateTopics ${autoCreateTopics})`, async (t) => {
    const { broker } = await openBroker(t, { autoCreateTopics });
    await broker.createTopic("good", 1);
    const invalid = conchError(ErrorCode.INVALID_TOPIC_NAME);
    for (const name of BAD_NAMES) {
      await assert.rejects(broker.produce(name, 0, batchOf(["v"]), "leader"), invalid, `produce ${name}`);
      await assert.rejects(
        broker.fetch({ topic: name, partition: 0, offset: 0, maxBytes: 1024, maxWaitMs: 0, minBytes: 1 }),
        invalid,
        `fetch ${name}`,
      );
      assert.throws(() => broker.describeTopic(name), invalid, `describe ${name}`);
      await assert.rejects(broker.listOffsets(name, 0, { kind: "latest" }), invalid, `list-offsets ${name}`);
      assert.throws(() => broker.partition(name, 0), invalid, `partition ${name}`);
    }
    // A legal name that is simply not there is still UNKNOWN_TOPIC.
    assert.throws(() => broker.describeTopic("absent"), conchError(ErrorCode.UNKNOWN_TOPIC));
    assert.deepEqual(broker.listTopics(), ["good"]);
  });
}

test("the producer refuses a bad topic name with INVALID_TOPIC_NAME and sends nothing", async (t) => {
  const fake = await FakeBroker.start(t);
  const producer = new Producer({ brokers: [fake.address] });
  t.after(() => producer.close());
  const invalid = conchError(ErrorCode.INVALID_TOPIC_NAME);
  for (const name of BAD_NAMES) {
    await assert.rejects(producer.send(name, { value: "v", partition: 0 }), invalid, `send ${name}`);
    await assert.rejects(producer.send(name, { value: "v" }), invalid, `keyless send ${name}`);
    await assert.rejects(producer.sendBatch(name, [{ value: "v" }]), invalid, `sendBatch ${name}`);
    await assert.rejects(producer.connect([name]), invalid, `connect ${name}`);
  }
  // Writing to the broker's internal topics is refused the same way.
  await assert.rejects(producer.send("__consumer_offsets", { value: "v", partition: 0 }), invalid);
  await producer.flush();
  assert.equal(fake.requests.length, 0);
});
