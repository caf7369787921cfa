import assert from "node:assert/strict";
import { createServer, type Socket } from "node:net";
import { test } from "node:test";
import { adoptSocket } from "../../src/net/adopt-socket.js";
import * as net from "../../src/net/index.js";
import * as p from "../../src/protocol/index.js";
import { batchOf, recordsOf, startServer, type TestClient } from "./helpers.js";

/** Values of batch `b`: 300 records of about 300 bytes, different in every batch (about 90 KB). */
function valuesOf(b: number): string[] {
  return Array.from({ length: 300 }, (_, i) =>
    `${b}:${i}:`.padEnd(300, String.fromCharCode(97 + ((b + i) % 26))),
  );
}

async function fetchAll(c: TestClient, topic: string, expected: number): Promise<[number, string][]> {
  const out: [number, string][] = [];
  while (out.length < expected) {
    const r = p.decodeFetchResponse(
      await c.call((id) =>
        p.encodeFetchRequest(id, {
          topic,
          partition: 0,
          offset: out.length,
          maxBytes: 4 << 20,
          maxWaitMs: 0,
          minBytes: 0,
        }),
      ),
    );
    const got = recordsOf(r.records).filter(([offset]) => offset >= out.length);
    if (got.length === 0) break;
    out.push(...got);
  }
  return out;
}

for (const autoCreate of [false, true]) {
  test(`large pipelined produces read into reused frames are stored byte for byte (${autoCreate ? "topic created by the first produce" : "existing topic"})`, async (t) => {
    const { broker, client } = await startServer(t, { autoCreateTopics: true });
    const topic = autoCreate ? "made_on_produce" : "existing";
    if (!autoCreate) await broker.createTopic(topic, 1);
    const c = await client();
    const batches = 24;
    const ids: number[] = [];
    const requests: Buffer[] = [];
    for (let b = 0; b < batches; b++) {
      const id = c.id();
      ids.push(id);
      requests.push(
        p.encodeProduceRequest(id, {
          topic,
          partition: 0,
          acks: 1,
          timeoutMs: 5000,
          records: batchOf(valuesOf(b)),
        }),
      );
    }
    // One write of about 2 MB: the broker reads it in pieces, each frame assembled over several
    // reads into pooled memory that the next frame reuses as soon as a produce has returned.
    c.send(Buffer.concat(requests));
    for (let b = 0; b < batches; b++) {
      const r = p.decodeProduceResponse(await c.response(ids[b]!));
      assert.equal(r.baseOffset, b * 300);
    }
    const stored = await fetchAll(c, topic, batches * 300);
    assert.equal(stored.length, batches * 300);
    for (let b = 0; b < batches; b++) {
      const values = valuesOf(b);
      for (let i = 0; i < 300; i++) {
        const [offset, value] = stored[b * 300 + i]!;
        assert.equal(offset, b * 300 + i);
        if (value !== values[i]) assert.fail(`record ${offset} changed after it was produced`);
      }
    }
  });
}

test("an adopted connection reads through onread, and closing it releases the server", async () => {
  const reads = new net.SocketReads();
  const parser = new net.FrameParser({ maxFrameBytes: 1 << 20 });
  reads.parser = parser;
  const frames: Buffer[] = [];
  reads.onRead = () => {
    for (let f = parser.next(); f !== null; f = parser.next()) frames.push(Buffer.from(f));
  };
  let adopted: { socket: Socket; onread: boolean } | null = null;
  let dataEvents = 0;
  const server = createServer({ pauseOnConnect: true }, (accepted) => {
    adopted = adoptSocket(accepted, reads);
    adopted.socket.on("data", () => dataEvents++);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const { connect } = await import("node:net");
  const client = connect({ port, host: "127.0.0.1" });
  await new Promise<void>((resolve) => client.once("connect", resolve));
  const big = Buffer.alloc(200_000, 5);
  const wire = Buffer.alloc(4 + big.length + 4 + 3);
  wire.writeUInt32BE(big.length, 0);
  big.copy(wire, 4);
  wire.writeUInt32BE(3, 4 + big.length);
  wire.write("abc", 8 + big.length);
  client.write(wire);
  for (let i = 0; i < 500 && frames.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(frames.length, 2);
  assert.deepEqual(frames[0], big);
  assert.equal(frames[1]!.toString(), "abc");
  assert.ok(adopted !== null);
  const { socket, onread } = adopted as { socket: Socket; onread: boolean };
  assert.equal(onread, true, "the handle was moved into a socket reading through onread");
  assert.equal(dataEvents, 0, "no 'data' event: every byte went through SocketReads");
  client.end();
  socket.end();
  // server.close() resolves only once the server counts no open connection.
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
});

test("a socket without a handle where Node keeps it is served as it is, through 'data' events", async () => {
  const reads = new net.SocketReads();
  let served: { socket: Socket; onread: boolean } | null = null;
  const chunks: Buffer[] = [];
  const server = createServer({ pauseOnConnect: true }, (accepted) => {
    // Stands in for a runtime that keeps the handle elsewhere.
    const handle = (accepted as unknown as { _handle: object | null })._handle;
    Object.defineProperty(accepted, "_handle", { value: undefined, configurable: true, writable: true });
    served = adoptSocket(accepted, reads);
    (accepted as unknown as { _handle: object | null })._handle = handle;
    served.socket.on("data", (c: Buffer) => chunks.push(c));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const { connect } = await import("node:net");
  const client = connect({ port, host: "127.0.0.1" });
  await new Promise<void>((resolve) => client.once("connect", resolve));
  client.write("hello");
  for (let i = 0; i < 500 && Buffer.concat(chunks).length < 5; i++)
    await new Promise((r) => setTimeout(r, 10));
  assert.ok(served !== null);
  const { socket, onread } = served as { socket: Socket; onread: boolean };
  assert.equal(onread, false);
  assert.equal(Buffer.concat(chunks).toString(), "hello", "the paused socket was resumed");
  client.end();
  socket.end();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
});
