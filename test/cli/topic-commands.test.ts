import assert from "node:assert/strict";
import { test } from "node:test";
import { describeJson, describeLines } from "../../src/cli/topic-commands.js";
import { runConch, useSharedBroker } from "./cli-harness.js";

const shared = useSharedBroker();

const conch = shared.conch;

test("create, list, describe and delete a topic", async () => {
  const created = await conch([
    "topic",
    "create",
    "orders",
    "--partitions",
    "3",
    "--config",
    "retention.ms=3600000",
  ]);
  assert.equal(created.code, 0, created.stderr);
  assert.equal(created.stdout, "", "a confirmation is not data");
  assert.match(created.stderr, /created topic orders with 3 partitions/);

  const compact = await conch(["topic", "create", "state", "--cleanup-policy", "compact"]);
  assert.equal(compact.code, 0, compact.stderr);

  const list = await conch(["topic", "list"]);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(list.stdout.split("\n"), ["orders", "state", ""]);

  await conch(["produce", "orders", "--partition", "1"], "a\nb\n");
  const describe = await conch(["topic", "describe", "orders"]);
  assert.equal(describe.code, 0, describe.stderr);
  const lines = describe.stdout.trimEnd().split("\n");
  assert.equal(lines[0], "topic: orders");
  assert.equal(lines[1], "partitions: 3");
  assert.ok(lines.includes("config: retention.ms=3600000"), describe.stdout);
  assert.deepEqual(lines.slice(-4), [
    "PARTITION  EARLIEST  LATEST",
    "0          0         0",
    "1          0         2",
    "2          0         0",
  ]);

  const json = await conch(["topic", "describe", "state", "--json"]);
  const parsed = JSON.parse(json.stdout) as {
    topic: string;
    partitions: unknown[];
    configs: Record<string, string>;
  };
  assert.equal(parsed.topic, "state");
  assert.deepEqual(parsed.partitions, [{ partition: 0, earliest: 0, latest: 0 }]);
  assert.equal(parsed.configs["cleanup.policy"], "compact");

  const deleted = await conch(["topic", "delete", "orders"]);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.equal((await conch(["topic", "list"])).stdout, "state\n");
});

test("alter changes a config", async () => {
  await conch(["topic", "create", "altered"]);
  const altered = await conch([
    "topic",
    "alter",
    "altered",
    "--config",
    "flush=sync",
    "--config",
    "retention.ms=1000",
  ]);
  assert.equal(altered.code, 0, altered.stderr);
  const { configs } = JSON.parse((await conch(["topic", "describe", "altered", "--json"])).stdout) as {
    configs: Record<string, string>;
  };
  assert.equal(configs.flush, "sync");
  assert.equal(configs["retention.ms"], "1000");
});

test("broker errors: one line on stderr with the code name, exit 1", async () => {
  for (const args of [
    ["topic", "describe", "missing"],
    ["topic", "delete", "missing"],
    ["topic", "alter", "missing", "--config", "flush=sync"],
  ]) {
    const r = await conch(args);
    assert.equal(r.code, 1, args.join(" "));
    assert.equal(r.stdout, "");
    assert.equal(r.stderr, 'error: unknown topic "missing" (UNKNOWN_TOPIC)\n');
  }
  await conch(["topic", "create", "twice"]);
  const again = await conch(["topic", "create", "twice"]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^error: .*\(TOPIC_ALREADY_EXISTS\)\n$/);
  const badConfig = await conch(["topic", "create", "badcfg", "--config", "flush=sometimes"]);
  assert.equal(badConfig.code, 1);
  assert.match(badConfig.stderr, /^error: .*\(INVALID_CONFIG\)\n$/);
});

test("usage errors exit 2 with one line", async () => {
  const cases = [
    ["topic", "create"],
    ["topic", "create", "x", "--partitions", "zero"],
    ["topic", "create", "x", "--cleanup-policy", "never"],
    ["topic", "list", "--bogus"],
    ["topic", "alter", "x"],
    ["topic", "create", "x", "--config", "novalue"],
    ["consume", "x", "--from", "first"],
    ["produce", "x", "--acks", "most"],
    ["frobnicate"],
  ];
  for (const args of cases) {
    const r = await conch(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /^error: /);
  }
});

test("--help and --version exit 0 on stdout", async () => {
  const help = await runConch(["topic", "create", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--partitions <n>/);
  const version = await runConch(["--version"]);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});

test("describe shows a partition's quarantined ranges, in lines and in JSON", () => {
  const view = {
    topic: "t",
    partitions: [
      { partition: 0, logStartOffset: 0, highWatermark: 9, quarantined: [] },
      {
        partition: 1,
        logStartOffset: 0,
        highWatermark: 30,
        quarantined: [{ firstOffset: 3, lastOffset: 5, segment: "00000000000000000000.wal", reason: "bad" }],
      },
    ],
    configs: {},
  };
  assert.equal(
    describeLines(view).at(-1),
    "quarantined: partition 1 offsets 3-5 in 00000000000000000000.wal: bad",
  );
  assert.deepEqual(describeJson(view), {
    topic: "t",
    partitions: [
      { partition: 0, earliest: 0, latest: 9 },
      {
        partition: 1,
        earliest: 0,
        latest: 30,
        quarantined: [{ firstOffset: 3, lastOffset: 5, segment: "00000000000000000000.wal", reason: "bad" }],
      },
    ],
    configs: {},
  });
});

test("describe shows a cluster topic's leaders, replicas and ISR, and offsets not known here as - (JSON: null)", () => {
  const view = {
    topic: "t",
    partitions: [
      {
        partition: 0,
        logStartOffset: 0,
        highWatermark: 9,
        figuresKnown: true,
        leaderId: 2,
        leaderEpoch: 1,
        replicas: [2, 3],
        isr: [2, 3],
        quarantined: [],
      },
      {
        partition: 1,
        logStartOffset: -1,
        highWatermark: -1,
        figuresKnown: false,
        leaderId: -1,
        leaderEpoch: 4,
        replicas: [3],
        isr: [],
      },
    ],
    configs: {},
  };
  assert.deepEqual(describeLines(view).slice(2), [
    "PARTITION  EARLIEST  LATEST  LEADER  REPLICAS  ISR",
    "0          0         9       2       2,3       2,3",
    "1          -         -       none    3",
    "offsets not known here: partition 1 (no leader, or it did not answer in time)",
  ]);
  assert.deepEqual(describeJson(view), {
    topic: "t",
    partitions: [
      { partition: 0, earliest: 0, latest: 9, leader: 2, replicas: [2, 3], isr: [2, 3] },
      { partition: 1, earliest: null, latest: null, leader: -1, replicas: [3], isr: [] },
    ],
    configs: {},
  });
});

test("describe of a single-node topic still being recovered: - for offsets not known yet, listed as runs", () => {
  const alone = { leaderId: 0, leaderEpoch: 0, replicas: [0], isr: [0] };
  const known = (partition: number) => ({
    partition,
    logStartOffset: 0,
    highWatermark: 4,
    figuresKnown: true,
    quarantined: [],
    ...alone,
  });
  const unknown = (partition: number) => ({
    partition,
    logStartOffset: -1,
    highWatermark: -1,
    figuresKnown: false,
    ...alone,
  });
  const view = {
    topic: "t",
    partitions: [known(0), unknown(1), unknown(2), unknown(3), known(4), unknown(5), unknown(6)],
    configs: {},
  };
  const lines = describeLines(view).slice(2);
  assert.deepEqual(lines.slice(0, 3), [
    "PARTITION  EARLIEST  LATEST",
    "0          0         4",
    "1          -         -",
  ]);
  assert.equal(
    lines.at(-1),
    "offsets not known yet: partitions 1-3, 5-6 (still being recovered after a crash; ask again)",
  );
  assert.deepEqual((describeJson(view) as { partitions: unknown[] }).partitions.slice(0, 2), [
    { partition: 0, earliest: 0, latest: 4 },
    { partition: 1, earliest: null, latest: null },
  ]);
});

test("topic alter --partitions grows a topic; its data stays; it never shrinks", async () => {
  await conch(["topic", "create", "growing", "--partitions", "2"]);
  assert.equal((await conch(["produce", "growing", "--partition", "1"], "kept\n")).code, 0);
  const grown = await conch(["topic", "alter", "growing", "--partitions", "5"]);
  assert.equal(grown.code, 0, grown.stderr);
  assert.equal(grown.stdout, "");
  assert.equal(grown.stderr, "topic growing now has 5 partitions\n");
  const view = JSON.parse((await conch(["topic", "describe", "growing", "--json"])).stdout) as {
    partitions: { partition: number; latest: number }[];
  };
  assert.deepEqual(
    view.partitions.map((p) => [p.partition, p.latest]),
    [
      [0, 0],
      [1, 1],
      [2, 0],
      [3, 0],
      [4, 0],
    ],
  );
  // The new partitions take messages at once.
  assert.equal((await conch(["produce", "growing", "--partition", "4"], "new\n")).code, 0);
  const read = await conch(["consume", "growing", "--partition", "4", "--max-messages", "1"]);
  assert.equal(read.stdout, "new\n");

  const shrink = await conch(["topic", "alter", "growing", "--partitions", "3"]);
  assert.equal(shrink.code, 1);
  assert.match(shrink.stderr, /^error: .*can only grow.*\(INVALID_PARTITIONS\)\n$/);
  const missing = await conch(["topic", "alter", "nosuchtopic", "--partitions", "3"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /\(UNKNOWN_TOPIC\)\n$/);
  const both = await conch(["topic", "alter", "growing", "--partitions", "6", "--config", "flush=sync"]);
  assert.equal(both.code, 0, both.stderr);
  assert.equal(both.stderr, "topic growing now has 6 partitions\naltered topic growing: flush\n");
});

test("topic create --if-not-exists succeeds on an existing topic and changes nothing", async () => {
  const first = await conch(["topic", "create", "maybe", "--partitions", "2", "--if-not-exists"]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stderr, "created topic maybe with 2 partitions\n");
  const again = await conch(["topic", "create", "maybe", "--partitions", "4", "--if-not-exists"]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stderr, "topic maybe already exists\n");
  const view = JSON.parse((await conch(["topic", "describe", "maybe", "--json"])).stdout) as {
    partitions: unknown[];
  };
  assert.equal(view.partitions.length, 2, "the existing topic is left as it was");
  const without = await conch(["topic", "create", "maybe"]);
  assert.equal(without.code, 1);
  assert.match(without.stderr, /\(TOPIC_ALREADY_EXISTS\)\n$/);
});
