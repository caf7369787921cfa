/**
 * Headers and null keys and values through a real broker: what the producer sends, the consumer's
 * messages give back byte for byte (null told apart from empty, headers in order with repeats),
 * and the producer refuses headers that are not headers without losing the other sends.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Conch } from "../../src/client/conch.js";
import type { ConsumerMessage } from "../../src/client/consumer.js";
import type { ProducerMessage } from "../../src/client/producer.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import { RealBroker } from "./real-broker.js";

const T = 1_700_000_000_123;
const BINARY = Buffer.from([0x00, 0xff, 0xc1, 0x80]);

/** What a message reads back as: null as null, bytes as hex, headers as [key, hex | null]. */
function shape(m: ConsumerMessage) {
  return {
    key: m.key === null ? null : m.key.toString("hex"),
    value: m.valueIsNull ? null : m.value.toString("hex"),
    headers: m.headers.map((h) => [h.key, h.value === null ? null : h.value.toString("hex")]),
    timestamp: m.timestamp,
  };
}

const hexOf = (s: string | Buffer) => (typeof s === "string" ? Buffer.from(s) : s).toString("hex");

test("send with headers, null and empty keys and values; consume gives back the same bytes", async (t) => {
  const rb = await RealBroker.start(t);
  const conch = new Conch({ brokers: [rb.address] });
  t.after(() => conch.close());
  await conch.admin().createTopic("h", { partitions: 1 });
  const producer = conch.producer();
  const sent: ProducerMessage[] = [
    { key: "plain", value: "v", timestamp: T },
    { key: "obj", value: "v", headers: { "content-type": "text/plain", "trace-id": BINARY }, timestamp: T },
    {
      key: BINARY,
      value: BINARY,
      headers: [
        ["x", "1"],
        ["x", null],
        ["ключ", BINARY],
        ["x", ""],
      ],
      timestamp: T + 1,
    },
    { key: "tomb", value: null, timestamp: T },
    { key: "empty", value: "", timestamp: T },
    { key: "", value: "empty key", timestamp: T },
    { key: null, value: null, timestamp: T },
    { value: "", timestamp: T },
  ];
  await Promise.all(sent.map((m) => producer.send("h", { ...m, partition: 0 })));
  // And the same through sendBatch, into one batch.
  await producer.sendBatch(
    "h",
    sent.map((m) => ({ ...m, partition: 0 })),
  );
  const expected = sent.map((m) => {
    const h = m.headers ?? [];
    const pairs = Array.isArray(h) ? h : Object.entries(h);
    return {
      key: m.key === null || m.key === undefined ? null : hexOf(m.key as string | Buffer),
      value: m.value === null ? null : hexOf(m.value as string | Buffer),
      headers: pairs.map(([k, v]) => [String(k), v === null ? null : hexOf(v as string | Buffer)]),
      timestamp: m.timestamp,
    };
  });
  const consumer = conch.consumer({ topics: ["h"] });
  const got: ConsumerMessage[] = [];
  for await (const m of consumer) {
    got.push(m);
    if (got.length === 2 * sent.length) break;
  }
  await consumer.close();
  assert.deepEqual(got.map(shape), [...expected, ...expected]);
  // Reading the headers twice gives the same array; a message without headers has [].
  assert.equal(got[1]!.headers, got[1]!.headers);
  assert.deepEqual(got[0]!.headers, []);
  assert.equal(got[3]!.value.length, 0, "a null value is an empty Buffer with valueIsNull");
});

test("headers that are not headers fail that send with INVALID_REQUEST; the others go", async (t) => {
  const rb = await RealBroker.start(t);
  const conch = new Conch({ brokers: [rb.address] });
  t.after(() => conch.close());
  await conch.admin().createTopic("bad", { partitions: 1 });
  const producer = conch.producer();
  const bad = [{ k: 1 }, [["k"]], [["k", {}]], "k=v"] as unknown as ProducerMessage["headers"][];
  for (const headers of bad) {
    await assert.rejects(
      producer.send("bad", { value: "x", headers, partition: 0 }),
      (e: unknown) => e instanceof ConchError && e.code === ErrorCode.INVALID_REQUEST,
      JSON.stringify(headers),
    );
  }
  const ok = await producer.send("bad", { value: "fine", headers: { a: "b" }, partition: 0 });
  assert.equal(ok.offset, 0, "nothing of the refused sends was written");
});
