/**
 * A proxy between a client and a real broker that damages data on the wire: one byte of the batch
 * at a given offset is flipped in every Fetch response that carries it. The broker's own stored
 * bytes stay good, so only the client's checks can notice. Fetch streams are refused with
 * UNKNOWN_API, which makes the client fall back to plain fetches, the one response shape it edits.
 */
import { connect, createServer, type Server, type Socket } from "node:net";
import type { TestContext } from "node:test";
import { batchBaseOffset, recordSize } from "../../src/format/batch-header.js";
import { ErrorCode } from "../../src/format/errors.js";
import { FrameParser } from "../../src/net/frame-parser.js";
import { ApiKey } from "../../src/protocol/api.js";
import { encodeErrorResponse } from "../../src/protocol/error-response.js";
import {
  requestApiKey,
  requestCorrelationId,
  responseCorrelationId,
  responseErrorCode,
} from "../../src/protocol/frame.js";

/** A fetch response's records start after correlationId, errorCode, hw, logStart and length. */
const FETCH_RECORDS_AT = 26;

/** A frame as the parser gave it (without its size field), framed again to be sent on. */
function framed(frame: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(4 + frame.length);
  out.writeUInt32BE(frame.length, 0);
  out.set(frame, 4);
  return out;
}

export class CorruptingProxy {
  readonly server: Server;
  #sockets = new Set<Socket>();

  constructor(target: { host: string; port: number }, offset: number, byteInBatch: number) {
    this.server = createServer((client) => {
      const broker = connect(target.port, target.host);
      for (const s of [client, broker]) {
        this.#sockets.add(s);
        s.on("error", () => {});
        s.on("close", () => {
          client.destroy();
          broker.destroy();
        });
      }
      const fetches = new Set<number>();
      const up = new FrameParser({ maxFrameBytes: 64 << 20 });
      client.on("data", (chunk: Buffer) => {
        up.push(chunk);
        for (let f = up.next(); f !== null; f = up.next()) {
          const correlationId = requestCorrelationId(f);
          const apiKey = requestApiKey(f);
          if (apiKey === ApiKey.FETCH_STREAM) {
            client.write(encodeErrorResponse(correlationId, ErrorCode.UNKNOWN_API, "no streams here"));
            continue;
          }
          if (apiKey === ApiKey.FETCH) fetches.add(correlationId);
          broker.write(framed(f));
        }
      });
      const down = new FrameParser({ maxFrameBytes: 64 << 20 });
      broker.on("data", (chunk: Buffer) => {
        down.push(chunk);
        for (let f = down.next(); f !== null; f = down.next()) {
          const out = framed(f);
          const frame = out.subarray(4);
          if (fetches.delete(responseCorrelationId(frame)) && responseErrorCode(frame) === 0) {
            for (let at = FETCH_RECORDS_AT; at < frame.length; at += recordSize(frame, at)) {
              if (batchBaseOffset(frame, at) === offset) frame[at + byteInBatch]! ^= 0x40;
            }
          }
          client.write(out);
        }
      });
    });
  }

  static async start(
    t: TestContext,
    target: { host: string; port: number },
    offset: number,
    byteInBatch: number,
  ): Promise<CorruptingProxy> {
    const proxy = new CorruptingProxy(target, offset, byteInBatch);
    await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
    t.after(() => proxy.close());
    return proxy;
  }

  get address(): string {
    const a = this.server.address();
    if (a === null || typeof a === "string") throw new Error("not listening");
    return `127.0.0.1:${a.port}`;
  }

  close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
