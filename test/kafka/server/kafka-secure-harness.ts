/**
 * A broker with security (test/security/secure-server.ts) and its Kafka listener on 127.0.0.1
 * port 0, sharing the broker's BrokerSecurity: logins and ACLs as the broker runner wires them.
 */
import type { TestContext } from "node:test";
import type { BrokerConfig } from "../../../src/broker/broker-config.js";
import { KafkaFrontEnd } from "../../../src/kafka/server/kafka-front-end.js";
import { type SecureFixture, startSecureServer } from "../../security/secure-server.js";
import { RawKafkaClient } from "./kafka-harness.js";

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
