/**
 * Compressed batches end to end, per codec: the SDK producer (and `conch produce --compression`)
 * stores batches compressed, and the SDK consumer, `conch consume` and kcat through the Kafka
 * listener read every key, value, header and timestamp back byte for byte; a compressed batch
 * whose inside is bad is refused on the wire and nothing is stored.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CODEC_NAMES, type CodecName } from "../../src/format/codecs/index.js";
import { batchCodec, compressBatch } from "../../src/format/compressed-batch.js";
import { batchCrc } from "../../src/format/crc.js";
import { ErrorCode } from "../../src/format/errors.js";
import { createClient } from "../../src/index.js";
import * as p from "../../src/protocol/index.js";
import { CONCH } from "../cli/cli-harness.js";
import { hasTool, type KafkaFixture, runTool, startKafka } from "../kafka/server/kafka-harness.js";
import { batchOf, TestClient } from "../server/helpers.js";

const CODECS = CODEC_NAMES.filter((c) => c !== "none");
const N = 300;
const T = 1_700_000_000_000;

interface Sent {
  key: Buffer | null;
  value: Buffer | null;
  headers: [string, Buffer | null][];
  timestamp: number;
}

/** Messages of every kind: text, binary, null and empty keys and values, headers. */
function messages(): Sent[] {
  const out: Sent[] = [];
  for (let i = 0; i < N; i++) {
    const binary = Buffer.alloc(i % 17, i);
    out.push({
      key: i % 5 === 0 ? null : i % 7 === 0 ? Buffer.alloc(0) : Buffer.from(`key-${i % 23}`),
      value:
        i % 11 === 3 ? null : i % 2 === 0 ? Buffer.from(`message ${i} of a compressible stream`) : binary,
      headers:
        i % 3 === 0
          ? [
              ["trace", Buffer.from(`t${i}`)],
              ["empty", null],
            ]
          : [],
      timestamp: T + i,
    });
  }
  return out;
}

/** The first batch stored in partition 0: its codec. */
async function storedCodec(f: KafkaFixture, topic: string): Promise<number> {
  const { records } = await f.broker.partition(topic, 0).read(0, 1 << 20);
  assert.ok(records.length > 0);
  return batchCodec(records, 0);
}

async function sdkRead(bootstrap: string, topic: string, n: number): Promise<Sent[]> {
  const client = createClient({ brokers: [bootstrap] });
  try {
    const seen: Sent[] = [];
    for await (const m of client.consumer({ topics: [topic], from: "earliest" })) {
      seen.push({
        key: m.key === null ? null : Buffer.from(m.key),
        value: m.valueIsNull ? null : Buffer.from(m.value),
        headers: m.headers.map((h) => [h.key, h.value === null ? null : Buffer.from(h.value)]),
        timestamp: m.timestamp,
      });
      assert.equal(m.offset, seen.length - 1);
      if (seen.length === n) break;
    }
    return seen;
  } finally {
    await client.close();
  }
}

for (const codec of CODECS) {
  test(`${codec}: the SDK stores compressed batches, and the SDK, conch consume and kcat read them byte for byte`, async (t) => {
    const f = await startKafka(t);
    const topic = `z-${codec}`;
    await f.broker.createTopic(topic, 1);
    const sent = messages();
    const client = createClient({ brokers: [f.native] });
    try {
      const producer = client.producer({ compression: codec as CodecName, lingerMs: 5 });
      await producer.sendBatch(
        topic,
        sent.map((m) => ({
          key: m.key,
          value: m.value,
          headers: m.headers.length === 0 ? null : m.headers,
          timestamp: m.timestamp,
          partition: 0,
        })),
      );
      await producer.close();
    } finally {
      await client.close();
    }
    assert.equal(await storedCodec(f, topic), CODEC_NAMES.indexOf(codec));
    assert.deepEqual(await sdkRead(f.native, topic, N), sent);

    // conch consume: one value per line (text values only make sense here: compare their lines).
    const cli = await runTool(process.execPath, [
      CONCH,
      "consume",
      topic,
      "-b",
      f.native,
      "--max-messages",
      String(N),
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    const lines = cli.stdout.toString("latin1").split("\n").slice(0, N);
    sent.forEach((m, i) => {
      assert.equal(lines[i], (m.value ?? Buffer.alloc(0)).toString("latin1"), `conch consume, offset ${i}`);
    });

    if (!hasTool(t, "kcat", ["-V"], "apt-get install -y kcat")) return;
    const kc = await runTool("kcat", [
      "-b",
      f.bootstrap,
      "-C",
      "-t",
      topic,
      "-p",
      "0",
      "-o",
      "beginning",
      "-e",
      "-f",
      "%o %T %S|%s\n",
    ]);
    assert.equal(kc.code, 0, kc.stderr);
    const out = kc.stdout.toString("latin1");
    const expected = sent
      .map(
        (m, i) =>
          `${i} ${m.timestamp} ${m.value === null ? -1 : m.value.length}|${(m.value ?? Buffer.alloc(0)).toString("latin1")}\n`,
      )
      .join("");
    assert.equal(out, expected);
  });
}

test("conch produce --compression stores compressed batches that conch consume reads back", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("cli-z", 1);
  const input = Array.from({ length: 50 }, (_, i) => `line ${i} of the input`).join("\n");
  const produced = await runTool(
    process.execPath,
    [CONCH, "produce", "cli-z", "-b", f.native, "--compression", "zstd"],
    input,
  );
  assert.equal(produced.code, 0, produced.stderr);
  assert.equal(await storedCodec(f, "cli-z"), 4);
  const consumed = await runTool(process.execPath, [
    CONCH,
    "consume",
    "cli-z",
    "-b",
    f.native,
    "--max-messages",
    "50",
  ]);
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.equal(consumed.stdout.toString(), `${input}\n`);
  const refused = await runTool(
    process.execPath,
    [CONCH, "produce", "cli-z", "-b", f.native, "--compression", "brotli"],
    "x",
  );
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /brotli/);
});

test("a compressed batch whose inside is bad is refused on the wire, and nothing is stored", async (t) => {
  const f = await startKafka(t);
  await f.broker.createTopic("bad-z", 1);
  const port = Number(f.native.split(":")[1]);
  const c = await TestClient.connect(port);
  t.after(() => c.destroy());
  await c.handshake();
  const produce = (records: Buffer) =>
    c.call((id) =>
      p.encodeProduceRequest(id, { topic: "bad-z", partition: 0, acks: 1, timeoutMs: 1000, records }),
    );
  for (const codec of [1, 2, 3, 4] as const) {
    // Record 1's offset delta says 7: the envelope and its CRC are sound, the inside is not.
    const plain = batchOf(["a", "b", "c"]);
    plain.writeUInt32BE(7, 49 + 30 + 13);
    plain.writeUInt32BE(batchCrc(plain, 0, plain.length), 29);
    const framing = await produce(compressBatch(plain, codec));
    assert.equal(p.responseError(framing)?.code, ErrorCode.INVALID_BATCH, `codec ${codec}`);
    // Compressed bytes that do not decompress, under a CRC that matches them.
    const garbled = compressBatch(batchOf(["a", "b", "c"]), codec);
    garbled.fill(0x5a, 49 + 4, garbled.length - 2);
    garbled.writeUInt32BE(batchCrc(garbled, 0, garbled.length), 29);
    const undecodable = await produce(garbled);
    assert.ok(
      [ErrorCode.CORRUPT_BATCH, ErrorCode.INVALID_BATCH].includes(
        p.responseError(undecodable)?.code as 13 | 14,
      ),
      `codec ${codec}: ${p.responseError(undecodable)?.message}`,
    );
  }
  assert.equal(f.broker.partition("bad-z", 0).logEndOffset, 0);
  // The connection still serves: a good compressed batch is stored.
  const good = await produce(compressBatch(batchOf(["fine"]), 3));
  assert.equal(p.responseError(good), null);
  assert.equal(f.broker.partition("bad-z", 0).logEndOffset, 1);
});
