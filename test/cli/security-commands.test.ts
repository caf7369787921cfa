import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { resolveBrokerConfig } from "../../src/broker/broker-config.js";
import { exposureWarnings } from "../../src/cli/broker-runner.js";
import { withTempDir } from "../security/helpers.js";
import { startSecureServer } from "../security/secure-server.js";
import { runConch } from "./cli-harness.js";

test("conch user add, list, passwd and delete work on the data directory", async () => {
  await withTempDir(async (dir) => {
    const env = { CONCH_USER_PASSWORD: "pencil-pencil" };
    const added = await runConch(["user", "add", "alice", "--data-dir", dir], { env });
    assert.equal(added.code, 0, added.stderr);
    const list = await runConch(["user", "list", "--data-dir", dir]);
    assert.match(list.stdout, /^alice\tSCRAM-SHA-256:\d+,SCRAM-SHA-512:\d+\n$/);
    const again = await runConch(["user", "add", "alice", "--data-dir", dir], { env });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /USER_ALREADY_EXISTS/);
    const noPassword = await runConch(["user", "add", "bob", "--data-dir", dir], {
      env: { CONCH_USER_PASSWORD: "" },
    });
    assert.equal(noPassword.code, 1);
    assert.match(noPassword.stderr, /CONCH_USER_PASSWORD/);
    const file = join(dir, "pw");
    await writeFile(file, "another-password\n");
    assert.equal(
      (await runConch(["user", "passwd", "alice", "--data-dir", dir, "--password-file", file])).code,
      0,
    );
    assert.equal((await runConch(["user", "delete", "alice", "--data-dir", dir])).code, 0);
    const gone = await runConch(["user", "delete", "alice", "--data-dir", dir]);
    assert.match(gone.stderr, /UNKNOWN_USER/);
  });
});

test("client commands log in over TLS with SCRAM; a wrong password and an untrusted broker fail clearly", async (t) => {
  const f = await startSecureServer(t, { authentication: "required" }, { users: { alice: "pencil-pencil" } });
  // The broker's certificate names localhost, and localhost is where the command connects.
  await f.broker.createTopic("cli-secure", 1);
  const broker = `localhost:${f.tlsPort}`;
  const args = [
    "topic",
    "list",
    "-b",
    broker,
    "--sasl-mechanism",
    "scram-sha-256",
    "--sasl-username",
    "alice",
  ];
  const ok = await runConch([...args, "--tls-ca", f.caFile], {
    env: { CONCH_SASL_PASSWORD: "pencil-pencil" },
  });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "cli-secure\n");
  const wrong = await runConch([...args, "--tls-ca", f.caFile], {
    env: { CONCH_SASL_PASSWORD: "not-the-password" },
  });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /AUTHENTICATION_FAILED/);
  const untrusted = await runConch([...args, "--tls"], { env: { CONCH_SASL_PASSWORD: "pencil-pencil" } });
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.stderr, /TLS_FAILED/);
  const noLogin = await runConch(["topic", "list", "-b", `127.0.0.1:${f.port}`]);
  assert.match(noLogin.stderr, /ILLEGAL_SASL_STATE/);
});

test("a broker reachable from other hosts without logins or TLS is warned about; loopback is not", () => {
  assert.deepEqual(exposureWarnings(resolveBrokerConfig({})), []);
  const open = exposureWarnings(resolveBrokerConfig({ host: "0.0.0.0" }));
  assert.equal(open.length, 2);
  assert.match(open[0]!, /without a login/);
  assert.match(open[1]!, /unencrypted/);
  assert.equal(
    exposureWarnings(resolveBrokerConfig({ host: "0.0.0.0", authentication: "required" })).length,
    1,
  );
});

test("the start warning names the Kafka listener's plain port when it is served on a non-loopback host", () => {
  const open = exposureWarnings(resolveBrokerConfig({ host: "0.0.0.0", kafkaPort: 9092 }));
  assert.equal(open.length, 2);
  for (const line of open) assert.match(line, /Kafka port 9092/);
  assert.match(open[1]!, /--kafka-tls-port/);
  const nativeOnly = exposureWarnings(resolveBrokerConfig({ host: "0.0.0.0", kafka: false }));
  assert.equal(nativeOnly.length, 2);
  for (const line of nativeOnly) assert.doesNotMatch(line, /Kafka/);
});
