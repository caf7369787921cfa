/**
 * Structured fuzz: well-formed frames (valid size field and header) carrying random api keys and
 * versions and mutated bodies of real produce / fetch / fetch stream / stream credit / stream cancel /
 * create / describe / replica fetch requests, with bad topic
 * names, sent in pieces split at random points. The decoders and handlers are reached (unlike with
 * random size fields, which almost always exceed the maximum), and the broker must answer or
 * disconnect cleanly while a well-behaved client on another connection keeps being served.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { batchOf, type Fixture, recordsOf, startServer, type TestClient } from "./helpers.js";

const BAD_NAMES = ["../x", "", "a".repeat(300), "a/b", "ü🙂名", ".", "..", "a\u0000b", "__offsets", " x"];

/**
 * Bad names, random strings, and the real topic a third of the time: the requests that name it
 * and survive their mutations are the ones that succeed, and the test checks that some did.
 */
const topicName = fc.oneof(fc.constant("fuzz"), fc.constantFrom(...BAD_NAMES), fc.string({ maxLength: 40 }));

/** A real request body of one of the kinds the fuzz mutates (the frame minus size and header). */
const request = fc.oneof(
  fc
    .record({
      topic: topicName,
      partition: fc.integer({ min: -1, max: 3 }),
      acks: fc.constantFrom(-1, 0, 1, 2),
    })
    .map(
      (r) => (id: number) =>
        p.encodeProduceRequest(id, {
          topic: r.topic,
          partition: r.partition < 0 ? 0xffffffff : r.partition,
          acks: r.acks as p.AcksValue,
          timeoutMs: 100,
          records: batchOf(["fuzz"]),
        }),
    ),
  fc
    .record({
      topic: topicName,
      partition: fc.integer({ min: 0, max: 3 }),
      offset: fc.integer({ min: 0, max: 2 ** 40 }),
      maxBytes: fc.integer({ min: 0, max: 1 << 20 }),
      maxWaitMs: fc.integer({ min: 0, max: 600_000 }),
      minBytes: fc.integer({ min: 0, max: 1 << 20 }),
    })
    .map((r) => (id: number) => p.encodeFetchRequest(id, r)),
  fc
    .record({
      topic: topicName,
      partitions: fc.integer({ min: 0, max: 20_000 }),
      configs: fc.dictionary(
        fc.constantFrom("segment.bytes", "retention.ms", "cleanup.policy", "bogus"),
        fc.string({ maxLength: 12 }),
        { maxKeys: 2 },
      ),
    })
    .map((r) => (id: number) => p.encodeCreateTopicRequest(id, r)),
  topicName.map((topic) => (id: number) => p.encodeDescribeTopicRequest(id, { topic })),
  fc
    .record({
      topic: topicName,
      partition: fc.integer({ min: 0, max: 3 }),
      offset: fc.integer({ min: 0, max: 2 ** 40 }),
      maxBytes: fc.integer({ min: 0, max: 1 << 20 }),
      maxWaitMs: fc.integer({ min: 0, max: 600_000 }),
      minBytes: fc.integer({ min: 0, max: 1 << 20 }),
      windowBytes: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      group: fc.constantFrom("", "g"),
      memberId: fc.constantFrom("", "m"),
      generation: fc.integer({ min: 0, max: 3 }),
    })
    .map((r) => (id: number) => p.encodeFetchStreamRequest(id, r)),
  fc
    .record({ streamId: fc.integer({ min: 0, max: 2000 }), bytes: fc.integer({ min: 0, max: 2 ** 32 - 1 }) })
    .map((r) => (id: number) => p.encodeStreamCredit(id, r)),
  fc.integer({ min: 0, max: 2000 }).map((streamId) => (id: number) => p.encodeStreamCancel(id, streamId)),
  fc
    .record({
      topic: topicName,
      partition: fc.integer({ min: 0, max: 3 }),
      replicaId: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      currentLeaderEpoch: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      fetchOffset: fc.integer({ min: 0, max: 2 ** 40 }),
      lastFetchedEpoch: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      maxBytes: fc.integer({ min: 0, max: 1 << 20 }),
      maxWaitMs: fc.integer({ min: 0, max: 600_000 }),
      windowBytes: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
    })
    .map((r) => (id: number) => p.encodeReplicaFetchRequest(id, r)),
  fc
    .record({
      topic: topicName,
      acks: fc.constantFrom(0, 1, 2),
      partitions: fc.array(
        fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })),
        {
          minLength: 1,
          maxLength: 6,
        },
      ),
    })
    .map((r) => (id: number) => {
      const b = new BatchBuilder({ partitioned: true, slabBytes: 4096 });
      for (const partition of r.partitions) b.addTo(partition, "fuzz", "k", 1_700_000_000_000);
      return p.encodePartitionedProduceRequest(id, {
        topic: r.topic,
        acks: r.acks as p.AcksValue,
        timeoutMs: 100,
        records: Buffer.from(b.finish()),
      });
    }),
);

/** Undefined two times out of three: most frames keep most of their parts. */
function sometimes<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: arb, weight: 1 });
}

/** A frame: a real request, its header possibly changed, its body mutated, its size field kept true. */
const mutatedFrame = fc
  .record({
    encode: request,
    apiKey: sometimes(fc.integer({ min: 0, max: 24 })),
    version: sometimes(fc.integer({ min: 0, max: 3 })),
    flips: sometimes(
      fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), {
        minLength: 1,
        maxLength: 4,
      }),
    ),
    cut: sometimes(fc.nat()),
    extra: sometimes(fc.uint8Array({ minLength: 1, maxLength: 8 })),
  })
  .map((m) => (id: number): Buffer => {
    let f: Buffer;
    try {
      f = m.encode(id);
    } catch {
      f = p.encodeListTopicsRequest(id);
    }
    const body = Buffer.from(f.subarray(12));
    for (const { at, byte } of m.flips ?? []) if (body.length > 0) body[at % body.length] = byte;
    const kept = m.cut === undefined || body.length === 0 ? body : body.subarray(0, m.cut % body.length);
    const out = Buffer.concat([f.subarray(0, 12), kept, m.extra ?? Buffer.alloc(0)]);
    out.writeUInt32BE(out.length - 4, 0);
    if (m.apiKey !== undefined) out.writeUInt16BE(m.apiKey, 4);
    if (m.version !== undefined) out.writeUInt16BE(m.version, 6);
    return out;
  });

/** One produce and the fetch of what it wrote, on the well-behaved connection. */
async function roundTrip(well: TestClient, value: string): Promise<void> {
  const produced = p.decodeProduceResponse(
    await well.call((id) =>
      p.encodeProduceRequest(id, {
        topic: "steady",
        partition: 0,
        acks: 1,
        timeoutMs: 1000,
        records: batchOf([value]),
      }),
    ),
  );
  const fetched = p.decodeFetchResponse(
    await well.call((id) =>
      p.encodeFetchRequest(id, {
        topic: "steady",
        partition: 0,
        offset: produced.baseOffset,
        maxBytes: 1 << 20,
        maxWaitMs: 0,
        minBytes: 1,
      }),
    ),
  );
  assert.deepEqual(recordsOf(fetched.records)[0], [produced.baseOffset, value]);
}

async function splitSend(bad: TestClient, bytes: Buffer, cuts: number[]): Promise<void> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const at of [...points, bytes.length]) {
    if (at > from) bad.send(bytes.subarray(from, at));
    from = at;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test("structured fuzz: mutated requests in random pieces are answered or cleanly refused; another client is served throughout", async (t) => {
  const f: Fixture = await startServer(t, { maxBatchBytes: 4096, maxPartitions: 100 });
  await f.broker.createTopic("steady", 1);
  await f.broker.createTopic("fuzz", 2);
  const well = await f.client();
  let rounds = 0;
  const codes = new Set<number>();
  await fc.assert(
    fc.asyncProperty(
      fc.array(mutatedFrame, { minLength: 1, maxLength: 6 }),
      fc.array(fc.nat(), { maxLength: 8 }),
      async (frames, cuts) => {
        const bad = await f.client();
        const bytes = Buffer.concat(frames.map((make) => make(bad.id())));
        // The well-behaved client works while the bad one sends.
        await Promise.all([splitSend(bad, bytes, cuts), roundTrip(well, `during-${rounds}`)]);
        bad.socket.end();
        await bad.closed;
        for (let r = await bad.next(); r !== null; r = await bad.next())
          codes.add(p.responseError(r)?.code ?? 0);
        await roundTrip(well, `after-${rounds}`);
        rounds++;
      },
    ),
    { numRuns: 150 },
  );
  assert.equal(well.isClosed, false);
  assert.equal(rounds, 150);
  // The decoders and handlers were reached: bodies were refused as malformed, bad names as
  // invalid, and some requests succeeded.
  for (const code of [0, ErrorCode.MALFORMED_REQUEST, ErrorCode.INVALID_TOPIC_NAME]) {
    assert.ok(codes.has(code), `some response had code ${code} (seen: ${[...codes].join(", ")})`);
  }
  // Nothing escaped the data directory or got created from a bad name.
  for (const name of f.broker.listTopics()) assert.doesNotMatch(name, /\/|\.\./);
});
