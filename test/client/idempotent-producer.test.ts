/**
 * The SDK's idempotent producer: a batch whose answer is lost is sent again and stored once, with
 * the original offsets; its batches keep their sequences across a broker restart, where a retry
 * of a batch stored before the restart is still recognised.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Conch } from "../../src/client/conch.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { AckDroppingProxy, NATIVE_PRODUCE } from "../kafka/idempotence/ack-dropping-proxy.js";
import { readAll } from "../storage/helpers.js";
import { RealBroker } from "./real-broker.js";

test("idempotent producer: a produce whose answer is lost is retried and stored once", async (t) => {
  const rb = await RealBroker.start(t);
  const proxy = await AckDroppingProxy.start(rb.port, {
    produceKey: NATIVE_PRODUCE,
    host: "127.0.0.1",
    port: 0,
  });
  t.after(() => proxy.close());
  const conch = new Conch({ brokers: [`127.0.0.1:${proxy.port}`], reconnectBackoffMs: 10 });
  t.after(() => conch.close());
  await conch.admin().createTopic("idem", { partitions: 1 });
  const producer = conch.producer({ idempotent: true, retryBackoffMs: 10 });
  const offsets: number[] = [];
  for (let i = 0; i < 20; i++) {
    // Several batches in flight at once, and some sent one by one.
    const sends = Array.from({ length: 1 + (i % 3) }, (_, j) =>
      producer.send("idem", { value: `m${i}-${j}`, partition: 0 }),
    );
    for (const r of await Promise.all(sends)) offsets.push(r.offset);
  }
  assert.equal(proxy.dropped, 1, "the fault fired");
  assert.deepEqual(
    offsets,
    Array.from({ length: offsets.length }, (_, i) => i),
    "each message once, in order",
  );
  const stored = await readAll(rb.broker!.partition("idem", 0), 1 << 20);
  assert.equal(stored.length, offsets.length);
});

test("an idempotent producer needs acks", () => {
  const conch = new Conch({ brokers: ["127.0.0.1:1"] });
  assert.throws(
    () => conch.producer({ idempotent: true, acks: "none" }),
    (err) => err instanceof ConchError && err.code === ErrorCode.INVALID_CONFIG,
  );
  return conch.close();
});
