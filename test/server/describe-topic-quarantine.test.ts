/**
 * DescribeTopic version 2 carries each partition's quarantined ranges to the SDK
 * (`admin.describeTopic`); the broker still answers version 1 with version 1's bytes, and the SDK
 * falls back to version 1 against a broker that only speaks it.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { createClient } from "../../src/client/conch.js";
import { recordSize } from "../../src/format/batch-header.js";
import * as p from "../../src/protocol/index.js";
import { ConchServer } from "../../src/server/conch-server.js";
import { defaultHandlers } from "../../src/server/dispatch.js";
import type { HandlerTable } from "../../src/server/handler.js";
import { makeBatch } from "../storage/helpers.js";
import { TestClient } from "./helpers.js";

const config = { segmentBytes: 4096, flush: "none" as const };

/** A data dir whose topic "t" (2 partitions) has one damaged batch in a closed segment of partition 1. */
async function damagedDataDir(t: TestContext): Promise<{ dataDir: string; segment: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-describe-"));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  const broker = await Broker.open({ ...config, dataDir });
  await broker.createTopic("t", 2);
  const log = broker.partition("t", 1);
  for (let i = 0; i < 100; i++) await log.append(makeBatch(`v${i}`, 3));
  await broker.close();
  const dir = join(dataDir, "topics", "t", "1");
  const segment = (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort()[1]!;
  const bytes = await readFile(join(dir, segment));
  const at = recordSize(bytes, 0);
  bytes[at + 60] = bytes[at + 60]! ^ 0x02;
  await writeFile(join(dir, segment), bytes);
  await unlink(join(dir, segment.replace(".wal", ".idx")));
  return { dataDir, segment };
}

async function serve(t: TestContext, dataDir: string, handlers?: HandlerTable): Promise<number> {
  const broker = await Broker.open({ ...config, dataDir });
  const server = new ConchServer(broker, handlers === undefined ? {} : { handlers });
  const { port } = await server.listen(0, "127.0.0.1");
  t.after(async () => {
    await server.close();
    await broker.close();
  });
  return port;
}

test("describeTopic returns each partition's quarantined ranges (DescribeTopic version 2)", async (t) => {
  const { dataDir, segment } = await damagedDataDir(t);
  const port = await serve(t, dataDir);
  const conch = createClient({ brokers: [`127.0.0.1:${port}`] });
  t.after(() => conch.close());
  const d = await conch.admin().describeTopic("t");
  assert.deepEqual(d.partitions[0]!.quarantined, []);
  const q = d.partitions[1]!.quarantined!;
  assert.equal(q.length, 1);
  assert.equal(q[0]!.segment, segment);
  assert.equal(q[0]!.lastOffset - q[0]!.firstOffset, 2, "the batch of 3 records");
  assert.equal(q[0]!.firstOffset, Number(segment.slice(0, 20)) + 3, "the segment's second batch");
  assert.match(q[0]!.reason, /CRC32C|invalid/);

  // Version 1 is answered as before: its decoder reads the response to the last byte.
  const raw = await TestClient.connect(port);
  t.after(() => raw.destroy());
  await raw.handshake();
  const v1 = p.decodeDescribeTopicResponse(
    await raw.call((id) => p.encodeDescribeTopicRequest(id, { topic: "t" })),
  );
  assert.deepEqual(
    v1.partitions.map((x) => Object.keys(x).sort()),
    [
      ["highWatermark", "logStartOffset", "partition"],
      ["highWatermark", "logStartOffset", "partition"],
    ],
  );
});

test("against a broker that speaks DescribeTopic version 1 only, describeTopic falls back to it", async (t) => {
  const { dataDir } = await damagedDataDir(t);
  const handlers = [...defaultHandlers()];
  const entry = handlers[p.ApiKey.DESCRIBE_TOPIC]!;
  handlers[p.ApiKey.DESCRIBE_TOPIC] = { version: 1, handle: entry.handle };
  const port = await serve(t, dataDir, handlers);
  const conch = createClient({ brokers: [`127.0.0.1:${port}`] });
  t.after(() => conch.close());
  const d = await conch.admin().describeTopic("t");
  assert.equal(d.partitions.length, 2);
  assert.equal(d.partitions[1]!.quarantined, undefined, "a version 1 broker does not report ranges");
  assert.ok(d.partitions[1]!.highWatermark >= 300);
});
