import assert from "node:assert/strict";
import { createHook } from "node:async_hooks";
import { once } from "node:events";
import { connect, createServer, type Socket } from "node:net";
import { test } from "node:test";
import { ReplyGather } from "../../src/net/reply-gather.js";

/** A connected pair on 127.0.0.1: the server's side and the client's, and a way to close both. */
async function socketPair(): Promise<{ server: Socket; client: Socket; close: () => Promise<void> }> {
  const listener = createServer();
  listener.listen(0, "127.0.0.1");
  await once(listener, "listening");
  const address = listener.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  const accepted = once(listener, "connection");
  const client = connect(address.port, "127.0.0.1");
  const [server] = (await accepted) as [Socket];
  await once(client, "connect");
  return {
    server,
    client,
    close: async () => {
      client.destroy();
      server.destroy();
      listener.close();
      await once(listener, "close");
    },
  };
}

/** Counts the socket's write calls from now on. */
function countWrites(socket: Socket): { count: number } {
  const counted = { count: 0 };
  const write = socket.write.bind(socket);
  socket.write = ((chunk: Buffer) => {
    counted.count++;
    return write(chunk);
  }) as typeof socket.write;
  return counted;
}

test("small replies made in one turn reach the socket in two writes (the first at once, the rest gathered), in order", async () => {
  const { server, client, close } = await socketPair();
  try {
    const writes = countWrites(server);
    let told = 0;
    const gather = new ReplyGather(server, () => told++);
    const expected: Buffer[] = [];
    for (let i = 0; i < 500; i++) {
      const reply = Buffer.from(`reply ${i};`);
      expected.push(reply);
      gather.add(reply);
    }
    assert.equal(
      writes.count,
      1,
      "the turn's first reply goes out at once, the rest wait for the turn's end",
    );
    assert.equal(gather.bytes, Buffer.concat(expected.slice(1)).length);
    const want = Buffer.concat(expected);
    const got: Buffer[] = [];
    let bytes = 0;
    client.on("data", (chunk: Buffer) => {
      got.push(chunk);
      bytes += chunk.length;
    });
    while (bytes < want.length) await once(client, "data");
    assert.equal(writes.count, 2, "two socket writes for 500 replies");
    assert.equal(told, 2);
    assert.equal(gather.bytes, 0);
    assert.deepEqual(Buffer.concat(got), want);
  } finally {
    await close();
  }
});

test("gathered replies past the flush size go out at once; a dropped gather writes nothing", async () => {
  const { server, close } = await socketPair();
  try {
    const writes = countWrites(server);
    const gather = new ReplyGather(server, () => {});
    const reply = Buffer.alloc(1024, 1);
    for (let i = 0; i < 65; i++) gather.add(reply);
    assert.equal(
      writes.count,
      2,
      "the first at once, then 64 KiB gathered without waiting for the turn to end",
    );
    gather.add(reply);
    gather.drop();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(writes.count, 2, "a dropped gather writes nothing");
  } finally {
    await close();
  }
});

test("ending a turn makes no async resource: a reply alone in its turn (a stop-and-wait producer's) costs no Microtask resource", async () => {
  const { server, client, close } = await socketPair();
  try {
    const gather = new ReplyGather(server, () => {});
    let microtaskResources = 0;
    const hook = createHook({
      init(_id, type) {
        if (type === "Microtask") microtaskResources++;
      },
    }).enable();
    const received = new Promise<void>((resolve) => {
      let bytes = 0;
      client.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes >= 200 * 5) resolve();
      });
    });
    try {
      // Each reply in a turn of its own: every one ends its turn.
      for (let i = 0; i < 200; i++) {
        gather.add(Buffer.from(`r${String(i).padStart(4, "0")}`));
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      hook.disable();
    }
    await received;
    assert.equal(microtaskResources, 0);
  } finally {
    await close();
  }
});
