import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { BrokerProcess, removeDir, runConch, tempDir } from "./cli-harness.js";

test("conch broker: one 'listening on' line, SIGTERM exits 0, data survives a restart", async () => {
  const dir = tempDir();
  try {
    const first = await BrokerProcess.start(join(dir, "data"));
    assert.match(first.address, /^127\.0\.0\.1:\d+$/);
    const listening = first.logLines.filter((l) => l.includes("listening"));
    assert.equal(listening.length, 1, first.logLines.join("\n"));
    const line = JSON.parse(listening[0]!) as { msg: string };
    assert.match(line.msg, /^conch broker listening on 127\.0\.0\.1:\d+ \(data .*data, flush interval\)$/);

    const b1 = ["--broker", first.address];
    assert.equal((await runConch(["topic", "create", "kept", "--partitions", "2", ...b1])).code, 0);
    const produced = await runConch(["produce", "kept", "--partition", "1", "--acks", "leader", ...b1], {
      input: "one\ntwo\nthree\n",
    });
    assert.equal(produced.stdout, "3 messages acknowledged\n");
    assert.deepEqual(await first.stop("SIGTERM"), { code: 0, signal: null });
    assert.ok(first.logLines.some((l) => l.includes("conch broker stopped")));

    const second = await BrokerProcess.start(join(dir, "data"));
    const b2 = ["--broker", second.address];
    assert.equal((await runConch(["topic", "list", ...b2])).stdout, "kept\n");
    const consumed = await runConch(["consume", "kept", "--max-messages", "3", ...b2]);
    assert.equal(consumed.stdout, "one\ntwo\nthree\n");
    assert.deepEqual(await second.stop("SIGINT"), { code: 0, signal: null });
  } finally {
    removeDir(dir);
  }
});

test("conch broker: settings from flags beat the environment, which beats the config file", async () => {
  const dir = tempDir();
  try {
    const file = join(dir, "conch.json");
    writeFileSync(file, JSON.stringify({ dataDir: join(dir, "from-file"), flush: "none" }));
    // flush: the environment beats the file; dataDir: the flag beats the environment and the file.
    const broker = await BrokerProcess.start(join(dir, "from-flag"), ["--config", file], {
      CONCH_FLUSH: "sync",
      CONCH_DATA_DIR: join(dir, "from-env"),
    });
    const line = broker.logLines.find((l) => l.includes("listening on"))!;
    assert.match(line, /from-flag, flush sync\)/);
    assert.deepEqual(await broker.stop(), { code: 0, signal: null });
  } finally {
    removeDir(dir);
  }
});

test("conch broker: a bad setting is one error line and exit 1", async () => {
  const r = await runConch(["broker", "--port", "0", "--flush", "sometimes", "--data-dir", "unused"]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^error: invalid setting flush \(from --flush\): .*\(INVALID_CONFIG\)\n$/);
  const unknown = await runConch(["broker", "--no-such-flag"]);
  assert.equal(unknown.code, 2);
});

test("conch broker: the config file may set logLevel; the flag beats it; a bad one names the file", async () => {
  const dir = tempDir();
  try {
    const file = join(dir, "conch.json");
    writeFileSync(file, JSON.stringify({ logLevel: "debug", logFormat: "json" }));
    const isDebug = (l: string): boolean => (JSON.parse(l) as { level: number }).level === 20;
    const verbose = await BrokerProcess.start(join(dir, "d"), ["--config", file]);
    assert.ok(verbose.logLines.some(isDebug), verbose.logLines.join("\n"));
    assert.deepEqual(await verbose.stop(), { code: 0, signal: null });

    const flagWins = await BrokerProcess.start(join(dir, "d"), ["--config", file, "--log-level", "info"]);
    assert.ok(!flagWins.logLines.some(isDebug), flagWins.logLines.join("\n"));
    assert.deepEqual(await flagWins.stop(), { code: 0, signal: null });

    writeFileSync(file, JSON.stringify({ logLevel: "loud" }));
    const bad = await runConch(["broker", "--port", "0", "--data-dir", join(dir, "d"), "--config", file]);
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, "");
    assert.match(
      bad.stderr,
      /^error: invalid setting logLevel \(from config file .*conch\.json\): .*\(INVALID_CONFIG\)\n$/,
    );
  } finally {
    removeDir(dir);
  }
});

test("conch broker: a port in use is one error line on stderr, no logs, exit 1", async () => {
  const dir = tempDir();
  const first = await BrokerProcess.start(join(dir, "a"));
  try {
    const port = first.address.split(":").pop()!;
    const r = await runConch([
      "broker",
      "--port",
      port,
      "--data-dir",
      join(dir, "b"),
      "--log-format",
      "json",
    ]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "", "no log lines");
    assert.equal(
      r.stderr,
      `error: cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE)\n`,
    );
  } finally {
    await first.stop();
    removeDir(dir);
  }
});
