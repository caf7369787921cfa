/**
 * The Kafka protocol over TLS (docs/kafka.md "TLS"), beside the plain Kafka listener: kcat with
 * SSL and SASL_SSL (SCRAM-SHA-256), confluent-kafka with SASL_SSL (SCRAM-SHA-512, PLAIN) and
 * SASL_PLAINTEXT (SCRAM, right and wrong password), kafkajs with `ssl` and `sasl`. Metadata
 * advertises the port the client came in on; an untrusted broker certificate is refused by the
 * client, an untrusted client certificate by the broker; a client certificate's principal is what
 * the ACLs check; SIGHUP's reload reaches the Kafka TLS listener. Certificates are made with openssl.
 */
import assert from "node:assert/strict";
import { copyFileSync, readFileSync } from "node:fs";
import { type TestContext, test } from "node:test";
import { connect, type TLSSocket } from "node:tls";
import { makeCert } from "../../security/certificates.js";
import { hasPythonModule, hasTool, PYTHON, runTool } from "./kafka-harness.js";
import { startTlsKafka, type TlsKafkaFixture, USERS } from "./kafka-secure-harness.js";
import { TestClients } from "./test-clients.js";

const hasKcat = (t: TestContext): boolean => hasTool(t, "kcat", ["-V"], "apt-get install -y kcat");

/** kcat's -X options for SSL to the fixture's TLS listener, trusting `ca`. */
function kcatSsl(f: TlsKafkaFixture, ca = f.kafkaCa): string[] {
  return ["-b", f.tlsBootstrap, "-X", "security.protocol=SSL", "-X", `ssl.ca.location=${ca}`];
}

function kcatSaslSsl(f: TlsKafkaFixture, mechanism: string, password = USERS.alice): string[] {
  return [
    "-b",
    f.tlsBootstrap,
    "-X",
    "security.protocol=SASL_SSL",
    "-X",
    `ssl.ca.location=${f.kafkaCa}`,
    "-X",
    `sasl.mechanisms=${mechanism}`,
    "-X",
    "sasl.username=alice",
    "-X",
    `sasl.password=${password}`,
  ];
}

/** How many records a topic's partition 0 holds. */
const stored = (f: TlsKafkaFixture, topic: string): number => f.broker.partition(topic, 0).highWatermark;

test("kafka TLS: kcat over SSL lists the broker at the TLS port, produces and consumes", async (t) => {
  if (!hasKcat(t)) return;
  const f = await startTlsKafka(t);
  await f.broker.createTopic("secure", 1);
  const list = await runTool("kcat", [...kcatSsl(f), "-L"]);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout.toString(), new RegExp(`broker 0 at 127\\.0\\.0\\.1:${f.kafkaTlsPort}`));
  const plain = await runTool("kcat", ["-b", f.bootstrap, "-L"]);
  assert.match(plain.stdout.toString(), new RegExp(`broker 0 at 127\\.0\\.0\\.1:${f.kafkaPort}\\b`));
  const produced = await runTool("kcat", [...kcatSsl(f), "-P", "-t", "secure"], "one\ntwo\n");
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await runTool("kcat", [
    ...kcatSsl(f),
    "-C",
    "-t",
    "secure",
    "-o",
    "beginning",
    "-e",
    "-q",
  ]);
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.deepEqual(consumed.stdout.toString().trim().split("\n"), ["one", "two"]);
});

test("kafka TLS: kcat over SASL_SSL with SCRAM-SHA-256 logs in, and a wrong password is refused", async (t) => {
  if (!hasKcat(t)) return;
  const f = await startTlsKafka(t, { authentication: "required" });
  await f.broker.createTopic("secure", 1);
  const produced = await runTool(
    "kcat",
    [...kcatSaslSsl(f, "SCRAM-SHA-256"), "-P", "-t", "secure"],
    "hello\n",
  );
  assert.equal(produced.code, 0, produced.stderr);
  assert.equal(stored(f, "secure"), 1);
  const wrong = await runTool("kcat", [
    ...kcatSaslSsl(f, "SCRAM-SHA-256", "not-the-password"),
    "-L",
    "-m",
    "5",
  ]);
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.stderr, /Authentication failed|SASL authentication error/i);
});

test("kafka TLS: an untrusted broker certificate is refused by the client; an untrusted client certificate by the broker", async (t) => {
  if (!hasKcat(t)) return;
  const clients = new TestClients(t);
  const f = await startTlsKafka(t, { tlsClientAuth: "required" });
  const untrusted = await runTool("kcat", [...kcatSsl(f, f.otherCa), "-L", "-m", "5"]);
  assert.notEqual(untrusted.code, 0);
  assert.match(untrusted.stderr, /certificate verify failed/i);
  const dir = f.kafkaCa.replace(/kca\.pem$/, "");
  const stranger = await runTool("kcat", [
    ...kcatSsl(f),
    "-X",
    `ssl.certificate.location=${dir}stranger.pem`,
    "-X",
    `ssl.key.location=${dir}stranger.key`,
    "-L",
    "-m",
    "5",
  ]);
  assert.notEqual(stranger.code, 0, "a client certificate from another CA gets no connection");
  const kafka = clients.kafkajs(f.tlsBootstrap, {
    ssl: { servername: "localhost" },
    retry: { retries: 0 },
    connectionTimeout: 3000,
  });
  const admin = kafka.admin();
  await assert.rejects(admin.connect(), /self.signed|unable to verify|certificate/i);
});

test("kafka TLS: a client certificate's principal is what the ACLs check", async (t) => {
  if (!hasKcat(t)) return;
  const f = await startTlsKafka(t, {
    tlsClientAuth: "required",
    authentication: "required",
    authorization: "on",
  });
  await f.broker.createTopic("reports", 1);
  await f.broker.createTopic("payroll", 1);
  await f.security.addAcls([
    {
      principal: "User:CN=reporting,O=acme",
      permission: "allow",
      operation: "write",
      resourceType: "topic",
      patternType: "literal",
      name: "reports",
    },
  ]);
  const mtls = [
    ...kcatSsl(f),
    "-X",
    `ssl.certificate.location=${f.clientCert}`,
    "-X",
    `ssl.key.location=${f.clientKey}`,
  ];
  const allowed = await runTool("kcat", [...mtls, "-P", "-t", "reports"], "quarterly\n");
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.equal(stored(f, "reports"), 1);
  const refused = await runTool("kcat", [...mtls, "-P", "-t", "payroll"], "raise\n");
  assert.match(refused.stderr, /authoriz/i);
  assert.equal(stored(f, "payroll"), 0);
});

/** A confluent-kafka producer that sends one value and prints "delivered" or the error. */
function confluentProducer(settings: Record<string, string>, topic: string, value: string): string {
  return `
from confluent_kafka import Producer
import json, sys
result = []
p = Producer(json.loads(${JSON.stringify(JSON.stringify(settings))}))
p.produce(${JSON.stringify(topic)}, ${JSON.stringify(value)}.encode(), callback=lambda err, msg: result.append(err))
left = p.flush(15)
if left == 0 and result and result[0] is None:
    print("delivered")
else:
    print("failed", result[0] if result else "not delivered")
    sys.exit(1)
`;
}

function confluentSettings(f: TlsKafkaFixture, overrides: Record<string, string>): Record<string, string> {
  return {
    "bootstrap.servers": f.tlsBootstrap,
    "security.protocol": "SASL_SSL",
    "ssl.ca.location": f.kafkaCa,
    "sasl.username": "alice",
    "sasl.password": USERS.alice,
    "message.timeout.ms": "10000",
    ...overrides,
  };
}

test("kafka TLS: confluent-kafka over SASL_SSL logs in with SCRAM-SHA-512 and with PLAIN", async (t) => {
  if (!hasPythonModule(t, "confluent_kafka", "python3-confluent-kafka")) return;
  const f = await startTlsKafka(t, { authentication: "required" });
  await f.broker.createTopic("secure", 1);
  for (const mechanism of ["SCRAM-SHA-512", "PLAIN"]) {
    const settings = confluentSettings(f, { "sasl.mechanisms": mechanism });
    const r = await runTool(PYTHON, ["-c", confluentProducer(settings, "secure", mechanism)]);
    assert.equal(r.stdout.toString().trim(), "delivered", `${mechanism}: ${r.stdout}${r.stderr}`);
  }
  assert.equal(stored(f, "secure"), 2);
});

test("kafka SASL_PLAINTEXT: confluent-kafka logs in with SCRAM, and a wrong password is refused", async (t) => {
  if (!hasPythonModule(t, "confluent_kafka", "python3-confluent-kafka")) return;
  const f = await startTlsKafka(t, { authentication: "required" });
  await f.broker.createTopic("plain", 1);
  const base = {
    "bootstrap.servers": f.bootstrap,
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanisms": "SCRAM-SHA-256",
    "sasl.username": "alice",
    "message.timeout.ms": "5000",
  };
  const ok = await runTool(PYTHON, [
    "-c",
    confluentProducer({ ...base, "sasl.password": USERS.alice }, "plain", "right"),
  ]);
  assert.equal(ok.stdout.toString().trim(), "delivered", `${ok.stdout}${ok.stderr}`);
  const wrong = await runTool(PYTHON, [
    "-c",
    confluentProducer({ ...base, "sasl.password": "not-the-password" }, "plain", "wrong"),
  ]);
  assert.equal(wrong.code, 1);
  assert.match(`${wrong.stdout}${wrong.stderr}`, /Authentication failed|SASL authentication error/i);
  assert.equal(stored(f, "plain"), 1);
});

test("kafka TLS: kafkajs with ssl and sasl produces and consumes", async (t) => {
  const clients = new TestClients(t);
  const f = await startTlsKafka(t, { authentication: "required" });
  await f.broker.createTopic("secure", 1);
  const kafka = clients.kafkajs(f.tlsBootstrap, {
    clientId: "tls-test",
    ssl: { ca: [readFileSync(f.kafkaCa)] },
    sasl: { mechanism: "scram-sha-512", username: "alice", password: USERS.alice },
    retry: { retries: 0 },
  });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: "secure", messages: [{ value: "x" }, { value: "y" }] });
  const consumer = kafka.consumer({ groupId: "tls-group", maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: "secure", fromBeginning: true });
  const values: string[] = [];
  await new Promise<void>((resolve, reject) => {
    consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
    void consumer.run({
      eachMessage: async ({ message }) => {
        values.push(String(message.value));
        if (values.length === 2) resolve();
      },
    });
  });
  assert.deepEqual(values, ["x", "y"]);
  // Every connection kafkajs opened went to the TLS listener: Metadata sent it there.
  assert.equal(f.kafka.listener.connectionCount, 0);
  assert.ok((f.kafka.tlsListener?.connectionCount ?? 0) > 0);
});

test("kafka TLS: a reload (SIGHUP) serves the new certificate to new connections of the Kafka TLS listener", async (t) => {
  const f = await startTlsKafka(t);
  const subject = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const s: TLSSocket = connect({
        host: "127.0.0.1",
        port: f.kafkaTlsPort,
        ca: readFileSync(f.kafkaCa),
        servername: "localhost",
      });
      s.once("secureConnect", () => {
        resolve(String(s.getPeerCertificate().subject.O ?? ""));
        s.destroy();
      });
      s.once("error", reject);
    });
  assert.equal(await subject(), "");
  const dir = f.kafkaCa.replace(/kca\.pem$/, "");
  const renewed = makeCert(dir, "renewed", "/O=renewed/CN=localhost", { ca: "kca", san: "IP:127.0.0.1" });
  copyFileSync(renewed.cert, `${dir}broker.pem`);
  copyFileSync(renewed.key, `${dir}broker.key`);
  await f.server.reloadSecurity();
  assert.equal(await subject(), "renewed");
});
