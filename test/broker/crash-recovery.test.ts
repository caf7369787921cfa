import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import { ErrorCode } from "../../src/format/errors.js";
import { batchOf, conchError, openBroker, recordsOf, tempDataDir } from "./helpers.js";

test("open removes what interrupted creates and deletes left behind", async (t) => {
  const { broker, dataDir } = await openBroker(t);
  await broker.createTopic("kept", 1);
  await broker.createTopic("doomed", 2);
  await broker.produce("kept", 0, batchOf(["v"]), "leader");
  await broker.produce("doomed", 1, batchOf(["w"]), "leader");
  await broker.close();
  const topics = join(dataDir, "topics");

  // A delete that crashed right after its rename: the topic is already in the trash.
  await rename(join(topics, "doomed"), join(topics, "~deleted-123-abcd"));
  // A create that crashed before its rename: a staging directory with metadata.
  await mkdir(join(topics, "~creating-0011223344556677"));
  await writeFile(join(topics, "~creating-0011223344556677", "topic.json"), "{}");
  // A metadata update that crashed before its rename.
  await writeFile(join(topics, "kept", "topic.json.tmp"), "{ half");
  // Something that is not ours: left alone.
  await writeFile(join(topics, "notes.txt"), "hello");

  const again = await Broker.open({ dataDir });
  t.after(() => again.close());
  assert.deepEqual(again.listTopics(), ["kept"]);
  assert.deepEqual((await readdir(topics)).sort(), ["kept", "notes.txt"]);
  assert.equal(existsSync(join(topics, "kept", "topic.json.tmp")), false);
  assert.deepEqual(
    recordsOf(
      (
        await again.fetch({
          topic: "kept",
          partition: 0,
          offset: 0,
          maxBytes: 1 << 20,
          maxWaitMs: 0,
          minBytes: 1,
        })
      ).records,
    ),
    [[0, "v"]],
  );
  // The deleted name can be created afresh, empty.
  await again.createTopic("doomed", 1);
  assert.equal(again.describeTopic("doomed").partitions[0]?.highWatermark, 0);
});

test("a topic whose partition directories were never made opens with empty partitions", async (t) => {
  const dataDir = await tempDataDir(t);
  const dir = join(dataDir, "topics", "bare");
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "topic.json"),
    JSON.stringify({ version: 1, name: "bare", partitions: 2, configs: {} }),
  );
  const broker = await Broker.open({ dataDir });
  t.after(() => broker.close());
  assert.deepEqual(
    broker.describeTopic("bare").partitions.map((p) => p.highWatermark),
    [0, 0],
  );
  await broker.produce("bare", 1, batchOf(["x"]), "leader");
});

test("unreadable topic metadata stops the open with a message naming the file", async (t) => {
  const cases: [string, RegExp][] = [
    ["{ not json", /cannot read .*topic\.json/],
    [
      JSON.stringify({ version: 1, name: "other", partitions: 1, configs: {} }),
      /does not match the directory/,
    ],
    [JSON.stringify({ version: 1, name: "bad", partitions: 0, configs: {} }), /partitions must be/],
    [JSON.stringify({ version: 9, name: "bad", partitions: 1, configs: {} }), /unsupported version/],
    [JSON.stringify({ version: 1, name: "bad", partitions: 1, configs: { flush: "x" } }), /flush/],
  ];
  for (const [content, pattern] of cases) {
    const dataDir = await tempDataDir(t);
    await mkdir(join(dataDir, "topics", "bad"), { recursive: true });
    await writeFile(join(dataDir, "topics", "bad", "topic.json"), content);
    await assert.rejects(
      Broker.open({ dataDir }),
      conchError(ErrorCode.STORAGE_ERROR, pattern),
      String(pattern),
    );
  }
});

test("a directory in the way of a new topic is reported, not overwritten", async (t) => {
  const { broker, dataDir } = await openBroker(t);
  // Not a topic of this broker (no metadata yet), but its name is taken on disk.
  await mkdir(join(dataDir, "topics", "squatter", "0"), { recursive: true });
  await assert.rejects(
    broker.createTopic("squatter", 1),
    conchError(ErrorCode.TOPIC_ALREADY_EXISTS, /directory/),
  );
  assert.ok(existsSync(join(dataDir, "topics", "squatter", "0")));
});

test("a directory without metadata is ignored at open", async (t) => {
  const dataDir = await tempDataDir(t);
  await mkdir(join(dataDir, "topics", "stray", "0"), { recursive: true });
  const broker = await Broker.open({ dataDir });
  t.after(() => broker.close());
  assert.deepEqual(broker.listTopics(), []);
  assert.ok(existsSync(join(dataDir, "topics", "stray", "0")), "left alone");
});
