/**
 * `conch broker` serves the Kafka protocol beside the native one: it logs the Kafka address, Kafka
 * clients reach it there, what `conch produce` writes a Kafka client reads, and `--no-kafka`
 * turns the listener off.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BrokerProcess, removeDir, runConch, tempDir } from "../../cli/cli-harness.js";
import { hasTool, runTool } from "./kafka-harness.js";

/** The Kafka address `conch broker` logged, from its JSON log lines. */
function kafkaAddress(broker: BrokerProcess): string | null {
  for (const line of broker.logLines) {
    const m = /conch Kafka protocol on (\S+) \(advertised as (\S+)\)/.exec(line);
    if (m) return m[1]!;
  }
  return null;
}

test("conch broker: the Kafka listener is on by default; conch produce -> kcat consume", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], "apt-get install -y kcat")) return;
  const dir = tempDir();
  const broker = await BrokerProcess.start(dir, ["--kafka-advertised-host", "localhost"]);
  t.after(async () => {
    await broker.stop();
    removeDir(dir);
  });
  const kafka = kafkaAddress(broker);
  assert.ok(kafka !== null, `a Kafka address in the log:\n${broker.logLines.join("\n")}`);
  assert.match(broker.logLines.join("\n"), /advertised as localhost:\d+/);
  const conch = (args: string[], input?: string) =>
    runConch([...args, "--broker", broker.address], input === undefined ? {} : { input });
  assert.equal((await conch(["topic", "create", "cli"])).code, 0);
  const produced = await conch(["produce", "cli", "--key-separator", "="], "user-1=login\nno key here\n");
  assert.equal(produced.code, 0, produced.stderr);
  const r = await runTool("kcat", [
    "-b",
    kafka,
    "-C",
    "-t",
    "cli",
    "-o",
    "beginning",
    "-e",
    "-f",
    "%o %K:%k %s\n",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.toString(), "0 6:user-1 login\n1 -1: no key here\n");
});

test("conch broker --no-kafka: no Kafka listener", async (t) => {
  const dir = tempDir();
  const broker = await BrokerProcess.start(dir, ["--no-kafka"]);
  t.after(async () => {
    await broker.stop();
    removeDir(dir);
  });
  assert.equal(kafkaAddress(broker), null);
});
