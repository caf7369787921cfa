/**
 * The producers that load a partition during failover rounds (failover-rounds.ts), one record per
 * send with acks=all, each finding the leader by itself: kafkajs through Kafka Metadata, or our SDK
 * (src/client: BrokerPool, routing by leader with Metadata refresh). Each answers a send with the
 * acknowledged offset. And the readers that check every acknowledged record afterwards:
 * librdkafka for the Kafka side, our consumer for the SDK's.
 */
import { Kafka, logLevel } from "kafkajs";
import { createClient } from "../../src/client/conch.js";
import type { BrokerProcess } from "./broker-process.js";
import { readWithLibrdkafka } from "./kafka-reader.js";

export type FailoverClient = "kafkajs" | "sdk";

export interface ProduceLoad {
  /** Resolves with the acknowledged offset; rejects when the client gave up on the record. */
  send(value: string): Promise<number>;
  close(): Promise<void>;
}

/** Tight client timeouts, the same for both: the round's clock includes the client's own waits. */
const REQUEST_TIMEOUT_MS = 1500;
const BACKOFF_MS = 50;
const BACKOFF_MAX_MS = 250;

export async function produceLoad(
  client: FailoverClient,
  brokers: readonly BrokerProcess[],
  topic: string,
): Promise<ProduceLoad> {
  if (client === "sdk") {
    // Restarted brokers listen on new ports: the SDK learns them from Metadata, as from any broker.
    const conch = createClient({
      brokers: brokers.map((b) => `127.0.0.1:${b.port}`),
      connectTimeoutMs: 1000,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      reconnectBackoffMs: BACKOFF_MS,
      reconnectBackoffMaxMs: BACKOFF_MAX_MS,
    });
    const producer = conch.producer({
      acks: "all",
      maxInFlight: 1,
      retryBackoffMs: BACKOFF_MS,
      retryBackoffMaxMs: BACKOFF_MAX_MS,
      deliveryTimeoutMs: 30_000,
    });
    return {
      send: async (value) => (await producer.send(topic, { partition: 0, value })).offset,
      close: async () => {
        await producer.close();
        await conch.close();
      },
    };
  }
  const kafka = new Kafka({
    brokers: brokers.map((b) => `127.0.0.1:${b.kafkaPort}`),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: REQUEST_TIMEOUT_MS,
    retry: { retries: 50, initialRetryTime: BACKOFF_MS, maxRetryTime: BACKOFF_MAX_MS, factor: 0.2 },
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false, metadataMaxAge: 500 });
  await producer.connect();
  return {
    send: async (value) => {
      const [res] = await producer.send({ topic, acks: -1, messages: [{ value, partition: 0 }] });
      return Number(res?.baseOffset);
    },
    close: () => producer.disconnect(),
  };
}

/** "offset" -> value of every record of partition 0 below `end`, read from its leader. */
export async function readBack(
  client: FailoverClient,
  brokers: readonly BrokerProcess[],
  topic: string,
  end: number,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (client === "kafkajs") {
    const bootstrap = brokers.map((b) => `127.0.0.1:${b.kafkaPort}`).join(",");
    const read = await readWithLibrdkafka(bootstrap, topic, [end]);
    for (const [key, value] of read) out.set(key.slice(key.indexOf("/") + 1), value);
    return out;
  }
  const conch = createClient({ brokers: brokers.map((b) => `127.0.0.1:${b.port}`) });
  const consumer = conch.consumer({ partitions: [{ topic, partition: 0, from: "earliest" }] });
  try {
    for await (const m of consumer) {
      out.set(String(m.offset), m.value.toString());
      if (m.offset >= end - 1) break;
    }
  } finally {
    await consumer.close();
    await conch.close();
  }
  return out;
}
