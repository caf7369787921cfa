/**
 * A broker with security (test/security/secure-server.ts) and its Kafka listener on 127.0.0.1
 * port 0, sharing the broker's BrokerSecurity: logins and ACLs as the broker runner wires them.
 */

import assert from "node:assert/strict";
import type { TestContext } from "node:test";
import { Kafka, type KafkaConfig, logLevel } from "kafkajs";
import type { BrokerConfig } from "../../../src/broker/broker-config.js";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { KafkaFrontEnd } from "../../../src/kafka/server/kafka-front-end.js";
import { TestScramClient } from "../../security/scram-client.js";
import { type SecureFixture, startSecureServer } from "../../security/secure-server.js";
import { kafkaRequest, RawKafkaClient, responseBody } from "./kafka-harness.js";

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
export function aliceKafka(bootstrap: string, extra: Partial<KafkaConfig> = {}): Kafka {
  return new Kafka({
    clientId: "acl-test",
    brokers: [bootstrap],
    sasl: { mechanism: "scram-sha-256", username: "alice", password: USERS.alice },
    logLevel: logLevel.NOTHING,
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
