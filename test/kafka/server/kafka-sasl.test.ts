/**
 * SASL logins on the Kafka listener (docs/kafka.md "Authentication"): kafkajs and kcat log in with
 * SCRAM-SHA-256/512 unchanged; a wrong password is refused with SASL_AUTHENTICATION_FAILED and the
 * connection closed; with --authentication required nothing but ApiVersions and the login is
 * served before a login; PLAIN is not offered without TLS.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Kafka, SASLOptions } from "kafkajs";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { hasTool, kafkaRequest, metadataRequest, responseBody, runTool } from "./kafka-harness.js";
import { startSecureKafka, USERS } from "./kafka-secure-harness.js";
import { TestClients } from "./test-clients.js";

const KCAT_INSTALL = "apt-get install -y kcat";

function kafkajs(clients: TestClients, bootstrap: string, sasl: SASLOptions): Kafka {
  return clients.kafkajs(bootstrap, {
    clientId: "sasl-test",
    sasl,
    retry: { retries: 0 },
    connectionTimeout: 5000,
  });
}

for (const mechanism of ["scram-sha-256", "scram-sha-512"] as const) {
  test(`kafkajs logs in with ${mechanism} and produces and reads back`, async (t) => {
    const clients = new TestClients(t);
    const f = await startSecureKafka(t, { authentication: "required" });
    await f.broker.createTopic("secured", 1);
    const kafka = kafkajs(clients, f.bootstrap, { mechanism, username: "alice", password: USERS.alice });
    const producer = kafka.producer();
    await producer.connect();
    const [sent] = await producer.send({ topic: "secured", messages: [{ value: "hello" }] });
    assert.equal(sent?.errorCode, 0);
    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets("secured");
    assert.equal(offsets[0]?.high, "1");
  });

  test(`kafkajs with a wrong ${mechanism} password is refused`, async (t) => {
    const clients = new TestClients(t);
    const f = await startSecureKafka(t, { authentication: "required" });
    const kafka = kafkajs(clients, f.bootstrap, { mechanism, username: "alice", password: "wrong" });
    const admin = kafka.admin();
    await assert.rejects(admin.connect(), (err: Error) => {
      assert.match(`${err.name} ${err.message}`, /SASL|[Aa]uthentication/);
      return true;
    });
    await admin.disconnect();
  });
}

test("kafka: before a login only ApiVersions and SASL are served; anything else closes the connection", async (t) => {
  const f = await startSecureKafka(t, { authentication: "required" });
  await f.broker.createTopic("hidden", 1);
  const c = await f.raw();
  c.send(kafkaRequest(18, 0, 1, () => {}));
  const versions = responseBody(await c.next());
  assert.equal(versions.correlationId, 1);
  assert.equal(versions.body.int16(), KafkaErrorCode.NONE);
  c.send(metadataRequest(2, 1, []));
  await assert.rejects(c.next(), /closed before a response/, "no metadata before logging in");
});

test("kafka: a login is optional without --authentication required", async (t) => {
  const f = await startSecureKafka(t);
  await f.broker.createTopic("open", 1);
  const c = await f.raw();
  c.send(metadataRequest(1, 1, ["open"]));
  assert.equal(responseBody(await c.next()).correlationId, 1);
});

test("kafka: PLAIN is not offered without TLS; the handshake is refused and the connection closed", async (t) => {
  const f = await startSecureKafka(t, { authentication: "required" });
  const c = await f.raw();
  c.send(kafkaRequest(17, 1, 1, (w) => w.string("PLAIN")));
  const { body } = responseBody(await c.next());
  assert.equal(body.int16(), KafkaErrorCode.UNSUPPORTED_SASL_MECHANISM);
  const offered = [];
  for (let n = body.arrayCount(2); n > 0; n--) offered.push(body.string());
  assert.deepEqual(offered, ["SCRAM-SHA-256", "SCRAM-SHA-512"]);
  await c.closed;
});

test("kafka: SaslHandshake v0 (bare tokens after it) is not served: the connection closes", async (t) => {
  const f = await startSecureKafka(t, { authentication: "required" });
  const c = await f.raw();
  c.send(kafkaRequest(17, 0, 1, (w) => w.string("SCRAM-SHA-256")));
  await assert.rejects(c.next(), /closed before a response/);
});

test("kcat logs in with SCRAM-SHA-256 over SASL_PLAINTEXT, produces and consumes", async (t) => {
  if (!hasTool(t, "kcat", ["-V"], KCAT_INSTALL)) return;
  const f = await startSecureKafka(t, { authentication: "required" });
  const sasl = [
    "-X",
    "security.protocol=SASL_PLAINTEXT",
    "-X",
    "sasl.mechanisms=SCRAM-SHA-256",
    "-X",
    "sasl.username=bob",
    "-X",
    `sasl.password=${USERS.bob}`,
  ];
  await f.broker.createTopic("kc", 1);
  const put = await runTool("kcat", ["-b", f.bootstrap, ...sasl, "-P", "-t", "kc"], "one\ntwo\n");
  assert.equal(put.code, 0, put.stderr);
  const got = await runTool("kcat", ["-b", f.bootstrap, ...sasl, "-C", "-t", "kc", "-o", "beginning", "-e"]);
  assert.equal(got.code, 0, got.stderr);
  assert.deepEqual(got.stdout.toString().trim().split("\n"), ["one", "two"]);
  const bad = [...sasl.slice(0, -1), "sasl.password=wrong"];
  const refused = await runTool("kcat", ["-b", f.bootstrap, ...bad, "-L", "-m", "5"]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /[Aa]uthentication/);
});

test("kafka: ApiVersions advertises SaslHandshake 0-1 and SaslAuthenticate 0-1 with security", async (t) => {
  const f = await startSecureKafka(t);
  const c = await f.raw();
  c.send(kafkaRequest(18, 0, 1, () => {}));
  const { body } = responseBody(await c.next());
  assert.equal(body.int16(), KafkaErrorCode.NONE);
  const ranges = new Map<number, string>();
  for (let n = body.arrayCount(6); n > 0; n--) ranges.set(body.int16(), `${body.int16()}-${body.int16()}`);
  assert.equal(ranges.get(17), "0-1");
  assert.equal(ranges.get(36), "0-1");
});
