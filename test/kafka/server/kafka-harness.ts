/**
 * A real broker on a temp dir with its Kafka listener on 127.0.0.1 port 0, a bare-bytes Kafka
 * client, and the checks that decide whether a test may run without an outside tool.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import type { Logger } from "pino";
import { Broker, type BrokerOpenOptions } from "../../../src/broker/broker.js";
import type { BrokerConfig } from "../../../src/broker/broker-config.js";
import { KafkaReader } from "../../../src/kafka/protocol/kafka-reader.js";
import { type KafkaSink, KafkaSizer, KafkaWriter } from "../../../src/kafka/protocol/kafka-writer.js";
import { KafkaFrontEnd } from "../../../src/kafka/server/kafka-front-end.js";
import { ConchServer } from "../../../src/server/conch-server.js";
import { TestClient } from "../../server/helpers.js";

export interface KafkaFixture {
  broker: Broker;
  server: ConchServer;
  kafka: KafkaFrontEnd;
  /** The Kafka listener's port, and "127.0.0.1:port" for clients' bootstrap lists. */
  port: number;
  bootstrap: string;
  /** The native listener's "127.0.0.1:port". */
  native: string;
  client(): Promise<RawKafkaClient>;
}

/**
 * `config.dataDir`, when given, is a data directory made by the test (removed afterwards like a
 * fresh one); `open` is passed to Broker.open (e.g. openLazily, for a clean restart).
 */
export async function startKafka(
  t: TestContext,
  config: Partial<BrokerConfig> = {},
  logger?: Logger,
  open: BrokerOpenOptions = {},
): Promise<KafkaFixture> {
  const dataDir = config.dataDir ?? (await mkdtemp(join(tmpdir(), "conch-kafka-")));
  const broker = await Broker.open(
    {
      segmentBytes: 1024 * 1024,
      flush: "none",
      autoCreateTopics: true,
      ...config,
      dataDir,
    },
    logger,
    open,
  );
  const server = new ConchServer(
    broker,
    logger === undefined ? { shutdownTimeoutMs: 2000 } : { shutdownTimeoutMs: 2000, logger },
  );
  const kafka = new KafkaFrontEnd(server, broker, { advertisedHost: broker.config.kafkaAdvertisedHost });
  const native = await server.listen(0, "127.0.0.1");
  const { port } = await kafka.listen(0, "127.0.0.1");
  const clients: RawKafkaClient[] = [];
  t.after(async () => {
    for (const c of clients) c.destroy();
    await server.close();
    await broker.close().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  });
  return {
    broker,
    server,
    kafka,
    port,
    bootstrap: `127.0.0.1:${port}`,
    native: `127.0.0.1:${native.port}`,
    client: async () => {
      const c = await RawKafkaClient.connect(port);
      clients.push(c);
      return c;
    },
  };
}

/**
 * The codec (attribute bits 0-2) of each Kafka batch stored in partition 0 of `topic`, read from
 * the segment files: every batch must be one stored as it came (envelope attribute bit 4).
 */
export async function storedCodecs(f: KafkaFixture, topic: string): Promise<number[]> {
  await f.broker.partition(topic, 0).flush();
  const dir = join(f.broker.config.dataDir, "topics", topic, "0");
  const codecs: number[] = [];
  for (const name of (await readdir(dir)).filter((n) => n.endsWith(".wal")).sort()) {
    const wal = await readFile(join(dir, name));
    for (let at = 0; at + 49 <= wal.length && wal[at] === 0xc1; at += 49 + wal.readUInt32BE(at + 21)) {
      assert.equal(wal.readUInt16BE(at + 33), 0x0010, "a Kafka batch stored as is");
      codecs.push(wal[at + 49 + 22]! & 7);
    }
  }
  return codecs;
}

/** A request frame, size field included: header v1 (v2 when `flexible`), then the body. */
export function kafkaRequest(
  apiKey: number,
  version: number,
  correlationId: number,
  body: (w: KafkaSink) => void,
  flexible = false,
): Buffer {
  const write = (w: KafkaSink): void => {
    w.int16(apiKey);
    w.int16(version);
    w.int32(correlationId);
    w.nullableString("test");
    if (flexible) w.emptyTaggedFields();
    body(w);
  };
  const sizer = new KafkaSizer();
  write(sizer);
  const w = new KafkaWriter(4 + sizer.size);
  w.int32(sizer.size);
  write(w);
  return w.finish();
}

/**
 * A Kafka client of bare bytes: the native tests' TestClient (its responses also start with the
 * correlation id), with pipelined sends and responses taken in arrival order.
 */
export class RawKafkaClient {
  readonly #conn: TestClient;

  private constructor(conn: TestClient) {
    this.#conn = conn;
  }

  static async connect(port: number): Promise<RawKafkaClient> {
    return new RawKafkaClient(await TestClient.connect(port));
  }

  get socket(): Socket {
    return this.#conn.socket;
  }

  get closed(): Promise<void> {
    return this.#conn.closed;
  }

  /** Responses received and not yet taken. */
  get pending(): number {
    return this.#conn.received;
  }

  /** Writes the frames in one write, as a client pipelining them. */
  send(...frames: Buffer[]): void {
    this.#conn.send(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
  }

  /** The next response frame (without its size field); rejects if the connection closes first. */
  async next(): Promise<Buffer> {
    const frame = await this.#conn.next();
    if (frame === null) throw new Error("the connection closed before a response");
    return frame;
  }

  destroy(): void {
    this.#conn.destroy();
  }
}

/** A reader over a response frame's body (after the correlation id), and that id. */
export function responseBody(frame: Buffer): { correlationId: number; body: KafkaReader } {
  const r = new KafkaReader(frame);
  return { correlationId: r.int32(), body: r };
}

/** Produce v3-7 responses: [topic, partition, error code, base offset] for each partition. */
export function readProduceResponse(frame: Buffer): [string, number, number, number][] {
  const { body: r } = responseBody(frame);
  const out: [string, number, number, number][] = [];
  const topics = r.arrayCount(1);
  for (let i = 0; i < topics; i++) {
    const name = r.string();
    const parts = r.arrayCount(1);
    for (let j = 0; j < parts; j++) {
      const index = r.int32();
      const error = r.int16();
      const base = r.int64();
      r.int64(); // log append time
      r.int64(); // log start offset (v5+; the tests send v7)
      out.push([name, index, error, base]);
    }
  }
  return out;
}

/** A Produce v7 request for one partition. */
export function produceRequest(
  correlationId: number,
  topic: string,
  partition: number,
  records: Buffer,
  acks = 1,
): Buffer {
  return kafkaRequest(0, 7, correlationId, (w) => {
    w.nullableString(null);
    w.int16(acks);
    w.int32(5000);
    w.arrayCount(1);
    w.string(topic);
    w.arrayCount(1);
    w.int32(partition);
    w.nullableBytes(records);
  });
}

/** A Metadata request at `version` for `topics` (v0: [] means all). */
export function metadataRequest(correlationId: number, version: number, topics: string[]): Buffer {
  return kafkaRequest(3, version, correlationId, (w) => {
    w.arrayCount(topics.length);
    for (const t of topics) w.string(t);
    if (version >= 4) w.boolean(true);
  });
}

/**
 * Whether `tool` can be run. In CI (`CI` set) a missing tool fails the test, since .ci/run installs
 * every one; elsewhere the test is skipped with a message saying what to install.
 */
export function hasTool(t: TestContext, tool: string, probe: string[], install: string): boolean {
  const r = spawnSync(tool, probe, { stdio: "ignore", timeout: 10_000 });
  if (r.error === undefined && r.status === 0) return true;
  if (process.env.CI !== undefined && process.env.CI !== "") {
    throw new Error(`${tool} is needed in CI: ${install}`);
  }
  t.skip(`${tool} is not installed (${install})`);
  return false;
}

/** Debian's python, which sees python3-confluent-kafka and python3-kafka (a python3 on PATH may not). */
export const PYTHON = "/usr/bin/python3";

export function hasPythonModule(t: TestContext, module: string, pkg: string): boolean {
  return hasTool(t, PYTHON, ["-c", `import ${module}`], `apt-get install -y ${pkg}`);
}

export interface ToolResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs a command with `input` on stdin; kills it after `timeoutMs` (a safety net). */
export function runTool(
  cmd: string,
  args: string[],
  input: Buffer | string = "",
  timeoutMs = 30_000,
): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr });
    });
    child.stdin.end(input);
  });
}
