import assert from "node:assert/strict";
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { type TestContext, test } from "node:test";
import { isLentReadBuffer, releaseReadBuffer, takeReadBuffer } from "../../src/format/read-buffers.js";
import { joinBuffers, writeReply } from "../../src/net/socket-writes.js";

const MiB = 1024 * 1024;

test("joinBuffers copies the first `count` buffers in order and nothing after them", () => {
  const parts = [Buffer.from("head"), Buffer.alloc(0), Buffer.from("-body-"), Buffer.from("stale")];
  const joined = joinBuffers(parts, 3, 10);
  assert.equal(joined.toString(), "head-body-");
  // A copy: the parts may be reused once the write is made.
  parts[0]!.fill(0);
  assert.equal(joined.toString(), "head-body-");
});

/** A connected pair on 127.0.0.1: the server's side (which writes) and the client's. */
async function socketPair(t: TestContext): Promise<{ server: Socket; client: Socket }> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const accepted = once(listener, "connection") as Promise<[Socket]>;
  const client = connect((listener.address() as AddressInfo).port, "127.0.0.1");
  const [server] = await accepted;
  t.after(() => {
    client.destroy();
    server.destroy();
    listener.close();
  });
  return { server, client };
}

/** Writes `count` replies of a header byte and 8 MiB read into a read buffer; returns the reads. */
function writeReads(server: Socket, count: number): Buffer[] {
  const reads: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const read = takeReadBuffer(8 * MiB);
    read.fill(0x41 + i);
    const records = read.subarray(0, 8 * MiB);
    reads.push(records);
    writeReply(server, [Buffer.from([0xf0 + i]), records]);
  }
  return reads;
}

test("a read buffer in a reply is not lent again until the socket's write of it ended", async (t) => {
  const { server, client } = await socketPair(t);
  client.pause();
  // 3 x 8 MiB: more than the kernel's socket buffers take while the client does not read.
  const replies = writeReads(server, 3);
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(server.writableLength > 0, "the writes are pending");
  const last = replies[2]!;
  assert.ok(isLentReadBuffer(last), "still lent while the socket holds the write");
  // A read made meanwhile gets another buffer, and scribbles on it.
  const other = takeReadBuffer(8 * MiB);
  assert.notEqual(other.buffer, last.buffer);
  other.fill(0);
  releaseReadBuffer(other);

  // What was read, from the pattern rather than the buffers (which an early reuse would change).
  const expected = Buffer.concat(
    replies.flatMap((r, i) => [Buffer.from([0xf0 + i]), Buffer.alloc(r.length, 0x41 + i)]),
  );
  let got = 0;
  let wrong = -1;
  client.on("data", (chunk: Buffer) => {
    if (wrong < 0 && !chunk.equals(expected.subarray(got, got + chunk.length))) wrong = got;
    got += chunk.length;
  });
  client.resume();
  await new Promise<void>((resolve) => server.write(Buffer.alloc(0), () => resolve()));
  while (got < expected.length) await once(client, "data");
  assert.equal(wrong, -1, "the bytes sent are the bytes read");
  for (const r of replies) assert.equal(isLentReadBuffer(r), false, "handed back once written");
});

test("a reply's read buffers are handed back when the socket is destroyed with the write pending", async (t) => {
  const { server, client } = await socketPair(t);
  client.pause();
  const reads = writeReads(server, 3);
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(isLentReadBuffer(reads[2]!));
  server.destroy();
  await once(server, "close");
  for (const r of reads) assert.equal(isLentReadBuffer(r), false);
});
