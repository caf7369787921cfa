import assert from "node:assert/strict";
import { test } from "node:test";
import * as p from "../../src/protocol/index.js";
import { batchOf, collectWarnings, recordsOf, startServer, until } from "./helpers.js";

const FLOOD = 20_000;

test("a connection pipelining 20k long polls is held to 1,000 in flight, and its disconnect leaves no waiter", async (t) => {
  const warnings = collectWarnings(t);

  const { broker, client } = await startServer(t);
  await broker.createTopic("quiet", 1);
  await broker.createTopic("busy", 1);
  const quiet = broker.partition("quiet", 0);

  const flooder = await client();
  const frames: Buffer[] = [];
  for (let i = 0; i < FLOOD; i++) {
    frames.push(
      p.encodeFetchRequest(flooder.id(), {
        topic: "quiet",
        partition: 0,
        offset: 0,
        maxBytes: 0,
        maxWaitMs: 600_000,
        minBytes: 1,
      }),
    );
  }
  flooder.send(Buffer.concat(frames));
  await until(() => quiet.waitingReaders >= 1000, `the long polls to wait (${quiet.waitingReaders})`);
  // Give the socket time to deliver the rest: the connection must not take them.
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setTimeout(resolve, 2));
  assert.equal(quiet.waitingReaders, 1000);

  flooder.destroy();
  await until(() => quiet.waitingReaders === 0, "the waits to end with the connection");

  // Another client is served as usual.
  const other = await client();
  const produced = p.decodeProduceResponse(
    await other.call((id) =>
      p.encodeProduceRequest(id, {
        topic: "busy",
        partition: 0,
        acks: 1,
        timeoutMs: 1000,
        records: batchOf(["after"]),
      }),
    ),
  );
  assert.equal(produced.baseOffset, 0);
  const fetched = p.decodeFetchResponse(
    await other.call((id) =>
      p.encodeFetchRequest(id, {
        topic: "busy",
        partition: 0,
        offset: 0,
        maxBytes: 1 << 20,
        maxWaitMs: 0,
        minBytes: 1,
      }),
    ),
  );
  assert.deepEqual(recordsOf(fetched.records), [[0, "after"]]);
  assert.deepEqual(
    warnings.filter((w) => w === "MaxListenersExceededWarning"),
    [],
  );
});
