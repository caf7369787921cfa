/**
 * A broker with security (test/security/secure-server.ts) and its Kafka listener on 127.0.0.1
 * port 0, sharing the broker's BrokerSecurity: logins and ACLs as the broker runner wires them.
 */

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import type { Kafka, KafkaConfig } from "kafkajs";
import type { BrokerConfig } from "../../../src/broker/broker-config.js";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { KafkaFrontEnd } from "../../../src/kafka/server/kafka-front-end.js";
import { makeCa, makeCert } from "../../security/certificates.js";
import { TestScramClient } from "../../security/scram-client.js";
import { type SecureFixture, startSecureServer } from "../../security/secure-server.js";
import { kafkaRequest, RawKafkaClient, responseBody } from "./kafka-harness.js";
import type { TestClients } from "./test-clients.js";

export interface SecureKafkaFixture extends SecureFixture {
  kafka: KafkaFrontEnd;
  kafkaPort: number;
  bootstrap: string;
  raw(): Promise<RawKafkaClient>;
}

export const USERS = { alice: "alice-secret", bob: "bob-secret" };

export async function startSecureKafka(
  t: TestContext,
  config: Partial<BrokerConfig> = {},
): Promise<SecureKafkaFixture> {
  // Failures free of delay: the tests fail logins on purpose.
  const f = await startSecureServer(t, config, { users: USERS, limiter: { freeFailures: 1_000_000 } });
  const kafka = new KafkaFrontEnd(f.server, f.broker, { security: f.security });
  const { port } = await kafka.listen(0, "127.0.0.1");
  const raws: RawKafkaClient[] = [];
  t.after(() => {
    for (const c of raws) c.destroy();
  });
  return Object.assign(f, {
    kafka,
    kafkaPort: port,
    bootstrap: `127.0.0.1:${port}`,
    raw: async () => {
      const c = await RawKafkaClient.connect(port);
      raws.push(c);
      return c;
    },
  });
}

/** kafkajs logged in as alice with SCRAM-SHA-256, failing at once rather than retrying. */
export function aliceKafka(clients: TestClients, bootstrap: string, extra: Partial<KafkaConfig> = {}): Kafka {
  return clients.kafkajs(bootstrap, {
    clientId: "acl-test",
    sasl: { mechanism: "scram-sha-256", username: "alice", password: USERS.alice },
    retry: { retries: 0 },
    ...extra,
  });
}

/** Logs a bare client in as `user` with SCRAM-SHA-256 (SaslHandshake v1, two SaslAuthenticate). */
export async function login(c: RawKafkaClient, user: string, password: string): Promise<void> {
  c.send(kafkaRequest(17, 1, 100, (w) => w.string("SCRAM-SHA-256")));
  assert.equal(responseBody(await c.next()).body.int16(), KafkaErrorCode.NONE);
  const scram = new TestScramClient("SCRAM-SHA-256", user, password);
  const step = async (token: Buffer, id: number): Promise<Buffer> => {
    c.send(kafkaRequest(36, 1, id, (w) => w.bytes(token)));
    const { body } = responseBody(await c.next());
    assert.equal(body.int16(), KafkaErrorCode.NONE);
    body.nullableString();
    return body.bytes();
  };
  const serverFirst = await step(scram.first(), 101);
  assert.ok(scram.verifies(await step(scram.final(serverFirst), 102)));
}

export interface TlsKafkaFixture extends SecureKafkaFixture {
  /** The Kafka TLS listener's port and bootstrap address. */
  kafkaTlsPort: number;
  tlsBootstrap: string;
  /** The CA of the broker's certificate (SAN IP:127.0.0.1) and of client `reporting` (CN=reporting,O=acme). */
  kafkaCa: string;
  clientCert: string;
  clientKey: string;
  /** A CA that issued nothing the broker trusts, with its own client certificate `stranger`. */
  otherCa: string;
}

/**
 * startSecureKafka with the Kafka TLS listener on 127.0.0.1 port 0 beside the plain one. The
 * broker's certificate names 127.0.0.1 in its subjectAltName, so librdkafka's hostname check
 * passes as it would against a real broker.
 */
export async function startTlsKafka(
  t: TestContext,
  config: Partial<BrokerConfig> = {},
): Promise<TlsKafkaFixture> {
  const certs = await mkdtemp(join(tmpdir(), "conch-kafka-tls-"));
  t.after(() => rm(certs, { recursive: true, force: true }));
  const kafkaCa = makeCa(certs, "kca");
  const server = makeCert(certs, "broker", "/CN=localhost", { ca: "kca", san: "IP:127.0.0.1,DNS:localhost" });
  const client = makeCert(certs, "reporting", "/O=acme/CN=reporting", { ca: "kca" });
  const otherCa = makeCa(certs, "other", "/CN=someone-else");
  makeCert(certs, "stranger", "/O=acme/CN=reporting", { ca: "other" });
  const f = await startSecureKafka(t, {
    tlsCert: server.cert,
    tlsKey: server.key,
    tlsCa: kafkaCa,
    ...config,
  });
  const { port } = await f.kafka.listenTls(0, "127.0.0.1");
  return Object.assign(f, {
    kafkaTlsPort: port,
    tlsBootstrap: `127.0.0.1:${port}`,
    kafkaCa,
    clientCert: client.cert,
    clientKey: client.key,
    otherCa,
  });
}
