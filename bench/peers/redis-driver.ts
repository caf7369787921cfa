import { Redis } from "ioredis";
import type { ClientDriver, Consumer, Endpoint, OnMessage, Producer } from "../suite/types.js";

// Redis Streams driven by ioredis. One XADD per message (Redis has no multi-entry XADD); a batch
// is a pipeline, written in one go and answered in one go. The durability lives in the server's
// appendfsync setting, so producers look the same in both modes.

const FIELD = "d";
const READ_COUNT = 10_000;
const BLOCK_MS = 500;

function connect(endpoint: Endpoint): Promise<Redis> {
  const redis = new Redis({
    host: endpoint.host,
    port: endpoint.port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  return redis.connect().then(() => redis);
}

export async function redisClient(endpoint: Endpoint): Promise<ClientDriver> {
  const admin = await connect(endpoint);
  return {
    async createStream(name, partitions = 1) {
      const pipeline = admin.pipeline();
      for (const key of streamKeys(name, partitions)) pipeline.del(key);
      await pipeline.exec();
    },
    async openProducer(stream, _durability, partitions = 1) {
      return new RedisProducer(await connect(endpoint), streamKeys(stream, partitions));
    },
    async openConsumer(stream) {
      return new RedisConsumer(await connect(endpoint), stream);
    },
    async close() {
      admin.disconnect();
    },
  };
}

/** The stream itself, or with partitions, one stream per key: `<name>-0` ... */
function streamKeys(name: string, partitions: number): string[] {
  return partitions <= 1 ? [name] : Array.from({ length: partitions }, (_, i) => `${name}-${i}`);
}

class RedisProducer implements Producer {
  readonly #redis: Redis;
  /** The streams messages go to, taken in turn (one unless spread over partitions). */
  readonly #streams: string[];
  #next = 0;

  constructor(redis: Redis, streams: string[]) {
    this.#redis = redis;
    this.#streams = streams;
  }

  #stream(): string {
    const streams = this.#streams;
    const stream = streams[this.#next]!;
    this.#next = this.#next + 1 === streams.length ? 0 : this.#next + 1;
    return stream;
  }

  async sendBatch(payloads: readonly Buffer[]): Promise<void> {
    if (payloads.length === 1) {
      await this.#redis.xadd(this.#stream(), "*", FIELD, payloads[0]!);
      return;
    }
    const pipeline = this.#redis.pipeline();
    for (const payload of payloads) pipeline.xadd(this.#stream(), "*", FIELD, payload);
    const replies = await pipeline.exec();
    if (replies === null) throw new Error("pipeline aborted");
    for (const [err] of replies) if (err) throw err;
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}

/** XREAD's RESP2 reply for one stream: [[key, [[id, [field, value, ...]], ...]]], or null on timeout. */
type XReadReply = [key: Buffer, entries: [id: Buffer, fields: Buffer[]][]][] | null;

class RedisConsumer implements Consumer {
  readonly #redis: Redis;
  readonly #stream: string;

  constructor(redis: Redis, stream: string) {
    this.#redis = redis;
    this.#stream = stream;
  }

  async run(onMessage: OnMessage, signal: AbortSignal): Promise<void> {
    let last: Buffer | string = "0-0";
    while (!signal.aborted) {
      const reply: XReadReply = await this.#redis.xreadBuffer(
        "COUNT",
        READ_COUNT,
        "BLOCK",
        BLOCK_MS,
        "STREAMS",
        this.#stream,
        last,
      );
      const entries: [id: Buffer, fields: Buffer[]][] | undefined = reply?.[0]?.[1];
      if (!entries || entries.length === 0) continue;
      for (const [, fields] of entries) {
        // fields = [name, value]; the payload is the value.
        const payload = fields[1]!;
        if (!onMessage(payload, 0, payload.length)) return;
      }
      last = entries[entries.length - 1]![0];
    }
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
