/**
 * admin.createPartitions over the wire (12 CreatePartitions): the topic grows, the new partitions
 * take messages, a group's member is rebalanced onto them at its next heartbeat, and the refusals
 * come back as typed errors.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createClient } from "../../src/client/conch.js";
import { ErrorCode } from "../../src/format/errors.js";
import { conchError, serve, until } from "../groups/helpers.js";

test("admin.createPartitions grows a topic; a group member gets the new partitions", async (t) => {
  const served = await serve(t);
  const client = served.track(createClient({ brokers: [served.address] }));
  const admin = client.admin();
  await admin.createTopic("orders", { partitions: 2 });

  const member = served.track(
    client.consumer({ group: "g", topics: ["orders"], sessionTimeoutMs: 600, resetPolicy: "earliest" }),
  );
  await member.ready();
  assert.deepEqual(
    member
      .assignment()
      .map((p) => p.partition)
      .sort(),
    [0, 1],
  );

  await admin.createPartitions("orders", 4);
  const described = await admin.describeTopic("orders");
  assert.equal(described.partitions.length, 4);
  await until(() => member.assignment().length === 4, "the member to own the new partitions");

  const producer = client.producer();
  await producer.send("orders", { value: "on the new partition", partition: 3 });
  const it = member.messages();
  const m = await it.next();
  assert.equal(m.done, false);
  assert.equal(m.value?.partition, 3);
  assert.equal(m.value?.value.toString(), "on the new partition");
  await producer.close();

  await assert.rejects(admin.createPartitions("orders", 4), conchError(ErrorCode.INVALID_PARTITIONS));
  await assert.rejects(admin.createPartitions("nosuch", 4), conchError(ErrorCode.UNKNOWN_TOPIC));
  await assert.rejects(admin.createPartitions("orders", 10_001), conchError(ErrorCode.INVALID_PARTITIONS));
});

test("a running producer spreads keys over added partitions after its metadata refresh", async (t) => {
  const served = await serve(t);
  const client = served.track(createClient({ brokers: [served.address] }));
  const admin = client.admin();
  await admin.createTopic("grow", { partitions: 1 });
  const producer = served.track(client.producer({ metadataMaxAgeMs: 100 }));
  await producer.send("grow", { key: "k0", value: "before" });
  await admin.createPartitions("grow", 3);

  const landedPastZero = async (): Promise<boolean> => {
    const d = await admin.describeTopic("grow");
    return d.partitions.some((p) => p.partition > 0 && p.highWatermark > 0);
  };
  let i = 1;
  const deadline = performance.now() + 10_000;
  while (!(await landedPastZero())) {
    assert.ok(performance.now() < deadline, "no message reached an added partition within 10 s");
    await producer.send("grow", { key: `k${i++}`, value: "after" });
  }
});
