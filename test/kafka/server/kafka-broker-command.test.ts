/**
 * `conch broker` serves the Kafka protocol beside the native one: it logs the Kafka address, Kafka
 * clients reach it there, what `conch produce` writes a Kafka client reads, and `--no-kafka`
 * turns the listener off; `--kafka-tls-port` adds Kafka over TLS, and needs a certificate.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { BrokerProcess, removeDir, runConch, tempDir } from "../../cli/cli-harness.js";
import { makeCa, makeCert } from "../../security/certificates.js";
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

test("conch broker --kafka-tls-port: Kafka over TLS beside the plain listener, with --authorization on", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], "apt-get install -y kcat")) return;
  const dir = tempDir();
  const certs = join(dir, "certs");
  mkdirSync(certs);
  const ca = makeCa(certs);
  const server = makeCert(certs, "broker", "/CN=localhost", { ca: "ca", san: "IP:127.0.0.1" });
  const broker = await BrokerProcess.start(join(dir, "data"), [
    ...["--tls-port", "0", "--tls-cert", server.cert, "--tls-key", server.key, "--kafka-tls-port", "0"],
    ...["--authorization", "on", "--super-users", "User:ANONYMOUS"],
  ]);
  t.after(async () => {
    await broker.stop();
    removeDir(dir);
  });
  const log = broker.logLines.join("\n");
  const m = /conch Kafka protocol over TLS on (\S+) \(advertised as (\S+)\)/.exec(log);
  assert.ok(m !== null, `a Kafka TLS address in the log:\n${log}`);
  const r = await runTool("kcat", [
    "-b",
    m[1]!,
    "-X",
    "security.protocol=SSL",
    "-X",
    `ssl.ca.location=${ca}`,
    "-L",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout.toString(), new RegExp(`broker 0 at ${m[2]!.replace(/\./g, "\\.")}`));
});

test("conch broker --kafka-tls-port without a certificate: a clear error, no start", async () => {
  const dir = tempDir();
  try {
    const r = await runConch([
      "broker",
      "--data-dir",
      dir,
      "--port",
      "0",
      "--kafka-port",
      "0",
      "--kafka-tls-port",
      "0",
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--kafka-tls-port needs --tls-cert and --tls-key/);
  } finally {
    removeDir(dir);
  }
});
