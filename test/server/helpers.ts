/** A real broker on a temp dir, a ConchServer on 127.0.0.1 port 0, and a bare-bytes test client. */
import { mkdtemp, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import type { BrokerConfig } from "../../src/broker/broker-config.js";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ConchError } from "../../src/format/errors.js";
import { RecordCursor } from "../../src/format/record-cursor.js";
import { FrameParser } from "../../src/net/frame-parser.js";
import { decodeFetchResponse, encodeFetchRequest, type FetchResponse } from "../../src/protocol/fetch.js";
import { responseCorrelationId } from "../../src/protocol/frame.js";
import { encodeHandshakeRequest } from "../../src/protocol/handshake.js";
import { ConchServer } from "../../src/server/conch-server.js";
import type { ConchServerOptions } from "../../src/server/server-options.js";

export interface Fixture {
  broker: Broker;
  server: ConchServer;
  port: number;
  /** A connected, handshaken client, closed when the test ends. */
  client(): Promise<TestClient>;
  /** A connected client that has not handshaken. */
  rawClient(): Promise<TestClient>;
}

export async function startServer(
  t: TestContext,
  config: Partial<BrokerConfig> = {},
  options: ConchServerOptions = {},
): Promise<Fixture> {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-server-"));
  const broker = await Broker.open({ segmentBytes: 1024 * 1024, flush: "none", ...config, dataDir });
  const server = new ConchServer(broker, { shutdownTimeoutMs: 2000, ...options });
  const { port } = await server.listen(0, "127.0.0.1");
  const clients: TestClient[] = [];
  t.after(async () => {
    for (const c of clients) c.destroy();
    await server.close();
    await broker.close().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  });
  const rawClient = async (): Promise<TestClient> => {
    const c = await TestClient.connect(port);
    clients.push(c);
    return c;
  };
  return {
    broker,
    server,
    port,
    rawClient,
    client: async () => {
      const c = await rawClient();
      await c.handshake();
      return c;
    },
  };
}

/** Writes request bytes and collects response frames, by correlation id or in arrival order. */
export class TestClient {
  readonly socket: Socket;
  #parser = new FrameParser({ maxFrameBytes: 256 * 1024 * 1024 });
  #frames: Buffer[] = [];
  #waiters: (() => void)[] = [];
  #nextId = 1000;
  readonly closed: Promise<void>;
  #isClosed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    this.closed = new Promise((resolve) =>
      socket.once("close", () => {
        this.#isClosed = true;
        resolve();
        this.#wake();
      }),
    );
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      this.#parser.push(chunk);
      for (let f = this.#parser.next(); f !== null; f = this.#parser.next())
        this.#frames.push(Buffer.from(f));
      this.#wake();
    });
  }

  static connect(port: number): Promise<TestClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: "127.0.0.1" });
      socket.once("error", reject);
      socket.once("connect", () => {
        socket.off("error", reject);
        resolve(new TestClient(socket));
      });
    });
  }

  get isClosed(): boolean {
    return this.#isClosed;
  }

  /** Response frames received and not yet taken. */
  get received(): number {
    return this.#frames.length;
  }

  id(): number {
    return this.#nextId++;
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Sends a request and waits for the response with its correlation id. */
  async call(encode: (id: number) => Buffer): Promise<Buffer> {
    const id = this.id();
    this.send(encode(id));
    return this.response(id);
  }

  async handshake(): Promise<void> {
    await this.call((id) => encodeHandshakeRequest(id, { minVersion: 1, maxVersion: 1, clientId: "test" }));
  }

  /** The response frame with this correlation id. Rejects if the connection closes first. */
  async response(correlationId: number): Promise<Buffer> {
    for (;;) {
      const i = this.#frames.findIndex((f) => responseCorrelationId(f) === correlationId);
      if (i >= 0) return this.#frames.splice(i, 1)[0]!;
      if (this.#isClosed) throw new Error(`connection closed before response ${correlationId}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** The next response frame in arrival order, or null if the connection closes first. */
  async next(): Promise<Buffer | null> {
    for (;;) {
      const f = this.#frames.shift();
      if (f !== undefined) return f;
      if (this.#isClosed) return null;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}

/** One batch of `values`, in its own buffer. */
export function batchOf(values: string[], timestampMs = 1_700_000_000_000): Buffer {
  const b = new BatchBuilder({ slabBytes: 4096 });
  for (const v of values) b.add(v, null, timestampMs);
  return Buffer.from(b.finish());
}

/** Everything partition `partition` of `topic` holds, in one fetch of up to 1 MiB that does not wait. */
export async function fetchAll(c: TestClient, partition: number, topic = "t"): Promise<FetchResponse> {
  return decodeFetchResponse(
    await c.call((id) =>
      encodeFetchRequest(id, { topic, partition, offset: 0, maxBytes: 1 << 20, maxWaitMs: 0, minBytes: 0 }),
    ),
  );
}

/** [offset, value] of every record in fetched bytes. */
export function recordsOf(bytes: Buffer): [number, string][] {
  const out: [number, string][] = [];
  const c = new RecordCursor(bytes);
  while (c.next()) out.push([c.offset, c.value().toString()]);
  return out;
}

export function conchError(code: number): (err: unknown) => boolean {
  return (err) => err instanceof ConchError && err.code === code;
}

/** Resolves once `condition` holds, checking after each turn of the event loop (bounded). */
export async function until(condition: () => boolean, what: string, maxTurns = 4_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, i < 100 ? 0 : 5));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** The names of the process warnings emitted until the test ends (MaxListenersExceeded, TimeoutOverflow...). */
export function collectWarnings(t: TestContext): string[] {
  const warnings: string[] = [];
  const onWarning = (w: Error): void => {
    warnings.push(w.name);
  };
  process.on("warning", onWarning);
  t.after(() => process.off("warning", onWarning));
  return warnings;
}
