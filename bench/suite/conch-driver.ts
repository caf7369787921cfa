import { BatchCursor, type Conch, createClient, type ProducerMessage } from "../../src/index.js";
import type { ClientDriver, Consumer, Durability, Endpoint, OnMessage, Producer } from "./types.js";

// Conch driven by its own SDK, the same way an application would: one producer or consumer per
// connection, acks=leader or acks=durable per producer, and the consumer's batch API, which walks
// fetched batches with a cursor instead of making an object per message.

/** Matches the broker's defaults, stated explicitly so that the topic cannot drift from the method. */
const TOPIC_CONFIGS = { flush: "interval", "flush.interval.ms": "1000" };
/** How long the admin client waits for an answer (a topic's creation). */
const CREATE_TIMEOUT_MS = 300_000;

export async function conchClient(endpoint: Endpoint): Promise<ClientDriver> {
  const brokers = [`${endpoint.host}:${endpoint.port}`];
  // Creating workload 6b's 10,000 partitions opens 10,000 logs in one request: on a loaded
  // machine that took over a minute, past the SDK's default request timeout of 30 s.
  const admin = createClient({ brokers, requestTimeoutMs: CREATE_TIMEOUT_MS });
  return {
    async createStream(name, partitions = 1) {
      await admin.admin().createTopic(name, { partitions, configs: TOPIC_CONFIGS });
    },
    async openProducer(stream, durability, partitions = 1) {
      const producer = new ConchProducer(createClient({ brokers }), stream, durability, partitions);
      // Connected before the clock starts, as the peers' producers are.
      await producer.connect();
      return producer;
    },
    async openConsumer(stream) {
      return new ConchConsumer(createClient({ brokers }), stream);
    },
    async readable(stream) {
      const { partitions } = await admin.admin().describeTopic(stream);
      return partitions.reduce((n, p) => n + p.highWatermark - p.logStartOffset, 0);
    },
    async close() {
      await admin.close();
    },
  };
}

class ConchProducer implements Producer {
  readonly #client: Conch;
  readonly #producer: ReturnType<Conch["producer"]>;
  readonly #topic: string;
  // The workloads pass the same payload array on every call: its messages are built once.
  #lastPayloads: readonly Buffer[] | null = null;
  #lastMessages: ProducerMessage[] = [];
  readonly #partitions: number;
  /** With keys: one message array per turn through the keys, used in turn. */
  #keyed: ProducerMessage[][] = [];
  #turn = 0;

  constructor(client: Conch, topic: string, durability: Durability, partitions: number) {
    this.#client = client;
    this.#producer = client.producer({ acks: durability === "durable" ? "durable" : "leader" });
    this.#topic = topic;
    this.#partitions = partitions;
  }

  connect(): Promise<void> {
    return this.#producer.connect([this.#topic]);
  }

  sendBatch(payloads: readonly Buffer[]): Promise<unknown> {
    if (payloads !== this.#lastPayloads) {
      this.#lastPayloads = payloads;
      this.#lastMessages = payloads.map((value) => ({ value, partition: 0 }));
      this.#keyed = keyedMessages(payloads, this.#partitions);
    }
    let messages = this.#lastMessages;
    if (this.#partitions > 1) {
      messages = this.#keyed[this.#turn]!;
      this.#turn = (this.#turn + 1) % this.#keyed.length;
    }
    // One message is what `send` is for: one promise and one small result, no result arrays.
    if (messages.length === 1) return this.#producer.send(this.#topic, messages[0]!);
    return this.#producer.sendBatch(this.#topic, messages);
  }

  async close(): Promise<void> {
    await this.#client.close();
  }
}

/**
 * The payloads with keys k0, k1, ... taken in turn, as many arrays as it takes to use every one of
 * `partitions` keys; the partitioner hashes the keys over the partitions.
 */
function keyedMessages(payloads: readonly Buffer[], partitions: number): ProducerMessage[][] {
  if (partitions <= 1) return [];
  const turns = Math.ceil(partitions / payloads.length);
  return Array.from({ length: turns }, (_, turn) =>
    payloads.map((value, i) => ({
      value,
      key: Buffer.from(`k${(turn * payloads.length + i) % partitions}`),
    })),
  );
}

class ConchConsumer implements Consumer {
  readonly #client: Conch;
  readonly #topic: string;

  constructor(client: Conch, topic: string) {
    this.#client = client;
    this.#topic = topic;
  }

  async run(onMessage: OnMessage, signal: AbortSignal): Promise<void> {
    const consumer = this.#client.consumer({
      partitions: [{ topic: this.#topic, partition: 0, from: "earliest" }],
      // CONCH_BENCH_CHECK_CRCS=0 measures the consumer without its CRC check (docs/performance/features.md).
      checkCrcs: process.env.CONCH_BENCH_CHECK_CRCS !== "0",
      // CONCH_BENCH_FETCH_BYTES=N fetches N bytes at a time instead of the default 1 MiB (unset or
      // empty: the default).
      ...(process.env.CONCH_BENCH_FETCH_BYTES
        ? { maxBytes: Number(process.env.CONCH_BENCH_FETCH_BYTES) }
        : {}),
      signal,
    });
    try {
      const cursor = new BatchCursor();
      for await (const batch of consumer.batches()) {
        batch.cursor(cursor);
        const bytes = cursor.buffer;
        while (cursor.next()) {
          if (!onMessage(bytes, cursor.valueStart, cursor.valueEnd)) return;
        }
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      await consumer.close();
    }
  }

  async close(): Promise<void> {
    await this.#client.close();
  }
}
