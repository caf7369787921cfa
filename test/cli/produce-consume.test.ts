import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { collect, runConch, spawnConch, useSharedBroker } from "./cli-harness.js";

const shared = useSharedBroker();

const conch = shared.conch;

interface JsonRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: string | null;
  value: string;
}

function parseJsonLines(text: string): JsonRecord[] {
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as JsonRecord);
}

test("lines of stdin come back as messages, exactly", async () => {
  assert.equal((await conch(["topic", "create", "lines"])).code, 0);
  const before = Date.now();
  const input = 'first\nsecond line with spaces\n\n{"json": "as text"}\nünïcødé ✓\nno newline at the end';
  const produced = await conch(["produce", "lines"], input);
  assert.equal(produced.code, 0, produced.stderr);
  assert.equal(produced.stdout, "6 messages acknowledged\n");

  const consumed = await conch(["consume", "lines", "--format", "json", "--max-messages", "6"]);
  assert.equal(consumed.code, 0, consumed.stderr);
  const records = parseJsonLines(consumed.stdout);
  assert.deepEqual(
    records.map(({ timestamp: _, ...r }) => r),
    ["first", "second line with spaces", "", '{"json": "as text"}', "ünïcødé ✓", "no newline at the end"].map(
      (value, offset) => ({ topic: "lines", partition: 0, offset, key: null, value }),
    ),
  );
  for (const r of records) assert.ok(r.timestamp >= before - 1000 && r.timestamp <= Date.now() + 1000);

  const values = await conch(["consume", "lines", "--timeout-ms", "1000"]);
  assert.equal(values.code, 0, values.stderr);
  assert.equal(values.stdout, `${input}\n`);
});

test("--key-separator splits at the first separator; lines without it have no key", async () => {
  await conch(["topic", "create", "keyed"]);
  const produced = await conch(
    ["produce", "keyed", "--key-separator", "::"],
    "k1::v1\nk2::v::2\nnokey\n::empty key\n",
  );
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await conch(["consume", "keyed", "--format", "json", "--max-messages", "4"]);
  assert.deepEqual(
    parseJsonLines(consumed.stdout).map((r) => [r.key, r.value]),
    [
      ["k1", "v1"],
      ["k2", "v::2"],
      [null, "nokey"],
      [null, "empty key"],
    ],
  );

  await conch(["topic", "create", "tabbed"]);
  await conch(["produce", "tabbed", "-k", "\\t"], "user-1\tlogin\n");
  const tabbed = await conch(["consume", "tabbed", "--format", "json", "-n", "1"]);
  assert.deepEqual(
    parseJsonLines(tabbed.stdout).map((r) => [r.key, r.value]),
    [["user-1", "login"]],
  );
});

test("--partition, --from and --max-messages", async () => {
  await conch(["topic", "create", "parts", "--partitions", "3"]);
  await conch(["produce", "parts", "--partition", "2"], "a\nb\nc\nd\n");
  await conch(["produce", "parts", "--partition", "0"], "x\n");

  const fromOffset = await conch([
    "consume",
    "parts",
    "--partition",
    "2",
    "--from",
    "2",
    "--max-messages",
    "2",
  ]);
  assert.equal(fromOffset.stdout, "c\nd\n");
  const limited = await conch(["consume", "parts", "--partition", "2", "--max-messages", "3"]);
  assert.equal(limited.stdout, "a\nb\nc\n");
  const latest = await conch(["consume", "parts", "--from", "latest", "--timeout-ms", "300"]);
  assert.equal(latest.code, 0);
  assert.equal(latest.stdout, "");
  const all = await conch(["consume", "parts", "--format", "json", "--max-messages", "5"]);
  assert.deepEqual(
    parseJsonLines(all.stdout)
      .map((r) => `${r.partition}/${r.offset}=${r.value}`)
      .sort(),
    ["0/0=x", "2/0=a", "2/1=b", "2/2=c", "2/3=d"],
  );

  const future = Date.now() + 60_000;
  const byTime = await conch(["consume", "parts", "--from", `@${future}`, "--timeout-ms", "300"]);
  assert.equal(byTime.code, 0, byTime.stderr);
  assert.equal(byTime.stdout, "");
  const fromPast = await conch(["consume", "parts", "--partition", "2", "--from", "@0", "-n", "1"]);
  assert.equal(fromPast.stdout, "a\n");
});

test("consume waits for messages produced after it started", async () => {
  await conch(["topic", "create", "live"]);
  const consumer = spawnConch([
    "consume",
    "live",
    "--from",
    "latest",
    "--max-messages",
    "2",
    "--broker",
    shared.broker.address,
  ]);
  const done = collect(consumer);
  // The consumer may not have looked up "latest" yet; produce until it has seen two messages.
  let produced = 0;
  while (consumer.exitCode === null && produced < 50) {
    await conch(["produce", "live"], `m${produced++}\n`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 2);
  const first = Number(lines[0]!.slice(1));
  assert.deepEqual(lines, [`m${first}`, `m${first + 1}`]);
});

test("the broker address can come from CONCH_BROKER", async () => {
  await conch(["topic", "create", "fromenv"]);
  const r = await runConch(["topic", "list"], { env: { CONCH_BROKER: shared.broker.address } });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.split("\n").includes("fromenv"));
});

test("unknown topics and partitions fail with one line and exit 1", async () => {
  const produce = await conch(["produce", "nowhere"], "a\n");
  assert.equal(produce.code, 1);
  assert.equal(produce.stdout, "");
  assert.equal(produce.stderr, 'error: unknown topic "nowhere" (UNKNOWN_TOPIC)\n');
  const consume = await conch(["consume", "nowhere", "--timeout-ms", "300"]);
  assert.equal(consume.code, 1);
  assert.equal(consume.stderr, 'error: unknown topic "nowhere" (UNKNOWN_TOPIC)\n');
  await conch(["topic", "create", "onepart"]);
  const partition = await conch(["consume", "onepart", "--partition", "5", "--timeout-ms", "300"]);
  assert.equal(partition.code, 1);
  assert.match(partition.stderr, /^error: .*\(UNKNOWN_PARTITION\)\n$/);
});

test("a reader that stops early (| head) ends consume quietly with exit 0", async () => {
  await conch(["topic", "create", "piped"]);
  const lines = Array.from({ length: 50_000 }, (_, i) => `line ${i}`).join("\n");
  assert.equal((await conch(["produce", "piped"], lines)).code, 0);
  const child = spawnConch(["consume", "piped", "--timeout-ms", "5000", "--broker", shared.broker.address]);
  const done = collect(child);
  // Read a little, then close the pipe as `head` does.
  await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  child.stdout!.destroy();
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
});

test("SIGINT ends produce's input early: what was read is sent and counted, exit 0", async () => {
  await conch(["topic", "create", "interrupted"]);
  const input = new PassThrough();
  const child = spawnConch(["produce", "interrupted", "--broker", shared.broker.address], { input });
  const done = collect(child);
  input.write("one\ntwo\nhalf a li");
  // Wait (bounded) until the two whole lines are stored, then interrupt with stdin still open.
  for (let i = 0; i < 100; i++) {
    const d = await conch(["topic", "describe", "interrupted", "--json"]);
    if ((JSON.parse(d.stdout) as { partitions: { latest: number }[] }).partitions[0]!.latest === 2) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGINT");
  const r = await done;
  input.end();
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "2 messages acknowledged\n");
  const consumed = await conch(["consume", "interrupted", "--timeout-ms", "1000"]);
  assert.equal(consumed.stdout, "one\ntwo\n");
});
