/**
 * After a crash a single-node broker recovers each partition's log lazily; describing a topic
 * (DescribeTopic version 3, the HTTP topic routes, `conch topic describe`) answers at once, the
 * partitions not recovered yet with their figures not known, never a made-up offset. It used to
 * wait for every partition of the topic (up to 30 s, then TIMEOUT).
 */
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import type { partitionRow } from "../../src/http/topic-rows.js";
import { createClient } from "../../src/index.js";
import { BrokerProcess, runConch } from "../cli/cli-harness.js";
import { call } from "../http/helpers.js";
import { CRASHED_PARTITIONS, crashedDir, everyLogOpen, HOLD_OPENS } from "./crashed-broker.js";
import { tempDataDir } from "./helpers.js";

/** A partition's row in the HTTP API. */
type Row = ReturnType<typeof partitionRow>;

const UNKNOWN_ROW = {
  figuresKnown: false,
  logStartOffset: null,
  logEndOffset: null,
  highWatermark: null,
  sizeBytes: null,
  segments: null,
  quarantined: null,
};

test("after SIGKILL a describe answers before the topic is recovered: recovered partitions with their figures, the others not known", {
  timeout: 120_000,
}, async (t) => {
  const dataDir = await tempDataDir(t);
  const acked = await crashedDir(dataDir);
  // No log can be recovered until the test lets one (fixtures/hold-opens.ts).
  const broker = await BrokerProcess.start(dataDir, [], HOLD_OPENS);
  t.after(() => broker.stop("SIGKILL"));
  const client = createClient({ brokers: [broker.address] });
  t.after(() => client.close());
  const base = `http://${broker.httpAddress}`;
  const rows = async (): Promise<Row[]> => {
    const answer = await call(base, "GET", "/api/v1/topics/t/partitions");
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    return answer.json.partitions as Row[];
  };
  /** The topic's row in the listing: its partition count, size and messages. */
  const listed = async (): Promise<[string, number, number | null, number | null]> => {
    const answer = await call(base, "GET", "/api/v1/topics");
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    type Summary = { name: string; partitions: number; sizeBytes: number | null; messages: number | null };
    const [{ name, partitions, sizeBytes, messages }] = answer.json.topics as [Summary];
    return [name, partitions, sizeBytes, messages];
  };

  // Nothing recovered: every partition's figures are not known, and nothing is made up.
  const none = await client.admin().describeTopic("t");
  assert.equal(none.partitions.length, CRASHED_PARTITIONS);
  for (const p of none.partitions) {
    assert.deepEqual(
      [p.figuresKnown, p.logStartOffset, p.highWatermark, p.leaderId],
      [false, -1, -1, 0],
      `partition ${p.partition}`,
    );
  }
  assert.deepEqual(
    (await rows()).map(({ partition, ...rest }) => rest),
    acked.map(() => UNKNOWN_ROW),
  );
  assert.deepEqual(await listed(), ["t", CRASHED_PARTITIONS, null, null]);

  // Exactly one recovery let through: partition 0's, first in the background opener's line, which
  // the produce waits for (the same open).
  broker.child.kill("SIGUSR2");
  const sent = await client.producer({ acks: "leader" }).send("t", { value: "after", partition: 0 });
  assert.equal(sent.offset, acked[0]!.length, "appended after every acknowledged message");
  const end0 = acked[0]!.length + 1;
  const one = await client.admin().describeTopic("t");
  const p0 = one.partitions[0]!;
  assert.deepEqual(
    [p0.figuresKnown, p0.logStartOffset, p0.highWatermark, p0.logEndOffset],
    [true, 0, end0, end0],
  );
  assert.deepEqual(
    one.partitions.slice(1).map((p) => [p.figuresKnown, p.logStartOffset, p.highWatermark]),
    acked.slice(1).map(() => [false, -1, -1]),
  );
  const [r0, ...rest] = await rows();
  assert.equal(r0!.figuresKnown, true);
  assert.deepEqual([r0!.logStartOffset, r0!.logEndOffset, r0!.highWatermark], [0, end0, end0]);
  assert.ok(r0!.sizeBytes! > 0 && r0!.segments! >= 1 && r0!.quarantined!.length === 0);
  assert.deepEqual(
    rest.map(({ partition, ...figures }) => figures),
    acked.slice(1).map(() => UNKNOWN_ROW),
  );
  const detail = await call(base, "GET", "/api/v1/topics/t");
  assert.deepEqual(
    (detail.json.partitions as Row[]).map((p) => p.figuresKnown),
    [true, ...acked.slice(1).map(() => false)],
  );
  assert.deepEqual(await listed(), ["t", CRASHED_PARTITIONS, null, null], "no total made of the known part");

  // The command line: "-" and a line saying which offsets are not known yet; JSON null.
  const shown = await runConch(["topic", "describe", "t", "--broker", broker.address]);
  assert.equal(shown.code, 0, shown.stderr);
  const lines = shown.stdout.trimEnd().split("\n");
  const table = lines.slice(lines.findIndex((l) => l.startsWith("PARTITION")));
  assert.deepEqual(table[0]!.split(/\s+/), ["PARTITION", "EARLIEST", "LATEST"]);
  assert.deepEqual(table[1]!.split(/\s+/), ["0", "0", `${end0}`]);
  assert.deepEqual(table[2]!.split(/\s+/), ["1", "-", "-"]);
  assert.equal(
    table.at(-1),
    `offsets not known yet: partitions 1-${CRASHED_PARTITIONS - 1} (still being recovered after a crash; ask again)`,
  );
  const json = await runConch(["topic", "describe", "t", "--json", "--broker", broker.address]);
  assert.equal(json.code, 0, json.stderr);
  const described = JSON.parse(json.stdout) as { partitions: unknown[] };
  assert.deepEqual(described.partitions.slice(0, 2), [
    { partition: 0, earliest: 0, latest: end0 },
    { partition: 1, earliest: null, latest: null },
  ]);

  // Every recovery let through: every partition's true figures.
  broker.child.kill("SIGWINCH");
  await everyLogOpen(broker);
  const ends = acked.map((a, p) => a.length + (p === 0 ? 1 : 0));
  const all = await client.admin().describeTopic("t");
  assert.deepEqual(
    all.partitions.map((p) => [p.figuresKnown, p.logStartOffset, p.highWatermark]),
    ends.map((end) => [true, 0, end]),
  );
  assert.deepEqual(
    (await rows()).map((r) => [r.figuresKnown, r.logStartOffset, r.logEndOffset, r.highWatermark]),
    ends.map((end) => [true, 0, end, end]),
  );
  const [, , sizeBytes, messages] = await listed();
  assert.ok(sizeBytes! > 0);
  assert.equal(
    messages,
    ends.reduce((a, b) => a + b),
  );
  assert.deepEqual(await broker.stop("SIGTERM"), { code: 0, signal: null });
});

test("after SIGKILL a producer learns a topic's partition count without waiting for the topic's recovery", {
  timeout: 60_000,
}, async (t) => {
  const { broker, client } = await crashedAndHeld(t);
  // No log can be recovered, and connect needs only the count (a keyless or keyed send's first step).
  await client.producer().connect(["t"]);
  assert.equal(anyLogRecovered(broker), false);
  await broker.stop("SIGKILL");
});

test("after SIGKILL a consumer of a whole topic learns its partitions without waiting for the topic's recovery", {
  timeout: 60_000,
}, async (t) => {
  const { broker, client } = await crashedAndHeld(t);
  const aborted = new AbortController();
  const consumer = client.consumer({ topics: ["t"], signal: aborted.signal });
  // Positions wait for each partition's recovery, which the broker holds back; the list does not.
  const starting = consumer.start().catch(() => {});
  const deadline = Date.now() + 20_000;
  while (consumer.assignment().length < CRASHED_PARTITIONS && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(consumer.assignment().length, CRASHED_PARTITIONS, "every partition assigned");
  assert.equal(anyLogRecovered(broker), false, "while no log was recovered");
  aborted.abort();
  await starting;
  await broker.stop("SIGKILL");
});

/** A broker restarted after SIGKILL that recovers no log until told (HOLD_OPENS), and a client of it. */
async function crashedAndHeld(t: TestContext) {
  const dataDir = await tempDataDir(t);
  await crashedDir(dataDir);
  const broker = await BrokerProcess.start(dataDir, [], HOLD_OPENS);
  t.after(() => broker.stop("SIGKILL"));
  const client = createClient({ brokers: [broker.address] });
  t.after(() => client.close());
  return { broker, client };
}

function anyLogRecovered(broker: BrokerProcess): boolean {
  return broker.logLines.some((l) => l.includes("every partition log holding data is open"));
}
