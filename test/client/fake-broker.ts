/**
 * A scripted broker for connection-level tests: it speaks the real framing (the protocol codec)
 * and answers the handshake and Metadata (as a single node, as a real one does), and hands every other request to the test, which replies when and
 * how it likes (out of order, never, with an error, by closing the socket).
 */
import { createServer, type Server, type Socket } from "node:net";
import type { TestContext } from "node:test";
import { FrameParser } from "../../src/net/frame-parser.js";
import {
  ApiKey,
  DESCRIBE_TOPIC_LEADERS_VERSION,
  DESCRIBE_TOPIC_QUARANTINE_VERSION,
} from "../../src/protocol/api.js";
import { encodeDescribeTopicResponse } from "../../src/protocol/describe-topic.js";
import { encodeDescribeTopicResponseV2 } from "../../src/protocol/describe-topic-v2.js";
import { encodeDescribeTopicResponseV3 } from "../../src/protocol/describe-topic-v3.js";
import { encodeErrorResponse } from "../../src/protocol/error-response.js";
import {
  requestApiKey,
  requestApiVersion,
  requestCorrelationId,
  responseWriter,
} from "../../src/protocol/frame.js";
import { encodeHandshakeResponse } from "../../src/protocol/handshake.js";
import { encodeMetadataResponse } from "../../src/protocol/metadata.js";

export interface FakeRequest {
  apiKey: number;
  correlationId: number;
  frame: Buffer;
  conn: FakeConnection;
}

export class FakeConnection {
  readonly socket: Socket;
  constructor(socket: Socket) {
    this.socket = socket;
  }
  /** A success response with `body` (after the header). */
  reply(correlationId: number, body: Buffer = Buffer.alloc(0)): void {
    const head = responseWriter(correlationId, body.length).finish();
    this.socket.write(Buffer.concat([head, body]));
  }
  error(correlationId: number, code: number, message: string): void {
    this.socket.write(encodeErrorResponse(correlationId, code, message));
  }
  /** Answers a DescribeTopic at the version it asks: topic "t" with `count` empty partitions, all led by broker 0. */
  describeTopic(req: FakeRequest, count: number): void {
    const partitions = Array.from({ length: count }, (_, p) => ({
      partition: p,
      logStartOffset: 0,
      highWatermark: 0,
      logEndOffset: 0,
      sizeBytes: 0,
      segments: 1,
      quarantined: [],
      figuresKnown: true,
      leaderId: 0,
      leaderEpoch: 0,
      replicas: [0],
      isr: [0],
    }));
    const version = requestApiVersion(req.frame);
    const encode =
      version >= DESCRIBE_TOPIC_LEADERS_VERSION
        ? encodeDescribeTopicResponseV3
        : version >= DESCRIBE_TOPIC_QUARANTINE_VERSION
          ? encodeDescribeTopicResponseV2
          : encodeDescribeTopicResponse;
    this.socket.write(encode(req.correlationId, { topic: "t", partitions, configs: {} }));
  }
}

export interface FakeBrokerOptions {
  /** The protocol version it agrees to in the handshake; default 1. */
  protocolVersion?: number;
  maxFrameBytes?: number;
  maxBatchBytes?: number;
}

export class FakeBroker {
  readonly server: Server;
  readonly requests: FakeRequest[] = [];
  readonly connections: FakeConnection[] = [];
  #onRequest: (req: FakeRequest) => void;
  #waiters: Array<() => void> = [];

  constructor(onRequest: (req: FakeRequest) => void = () => {}, options: FakeBrokerOptions = {}) {
    this.#onRequest = onRequest;
    this.server = createServer((socket) => {
      const conn = new FakeConnection(socket);
      this.connections.push(conn);
      const parser = new FrameParser({ maxFrameBytes: 64 << 20 });
      socket.on("error", () => {});
      socket.on("data", (chunk: Buffer) => {
        parser.push(chunk);
        for (let f = parser.next(); f !== null; f = parser.next()) {
          const apiKey = requestApiKey(f);
          const correlationId = requestCorrelationId(f);
          if (apiKey === ApiKey.HANDSHAKE) {
            socket.write(
              encodeHandshakeResponse(correlationId, {
                version: options.protocolVersion ?? 1,
                maxFrameBytes: options.maxFrameBytes ?? (4 << 20) + 65536,
                maxBatchBytes: options.maxBatchBytes ?? 4 << 20,
              }),
            );
            continue;
          }
          if (apiKey === ApiKey.METADATA) {
            socket.write(
              encodeMetadataResponse(correlationId, {
                brokerId: 0,
                controllerId: -1,
                brokers: [{ id: 0, host: "", port: 0 }],
                topics: [],
              }),
            );
            continue;
          }
          // The frame may be a view of the chunk: keep a copy.
          const req = { apiKey, correlationId, frame: Buffer.from(f), conn };
          this.requests.push(req);
          this.#onRequest(req);
          for (const w of this.#waiters.splice(0)) w();
        }
      });
    });
  }

  static async start(
    t: TestContext,
    onRequest?: (req: FakeRequest) => void,
    options?: FakeBrokerOptions,
  ): Promise<FakeBroker> {
    const fake = new FakeBroker(onRequest, options);
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    t.after(() => fake.close());
    return fake;
  }

  get address(): string {
    const a = this.server.address();
    if (a === null || typeof a === "string") throw new Error("not listening");
    return `127.0.0.1:${a.port}`;
  }

  /** Resolves once `n` requests (handshakes aside) have arrived. */
  async waitForRequests(n: number): Promise<void> {
    while (this.requests.length < n) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  dropConnections(): void {
    for (const c of this.connections) c.socket.destroy();
  }

  close(): Promise<void> {
    this.dropConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
