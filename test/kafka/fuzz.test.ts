/**
 * Fuzzing every request decoder: random frames, and the golden frames of real clients truncated,
 * mutated and with forged counts. A decoder may only refuse with the typed error (ConchError,
 * MALFORMED_REQUEST or UNSUPPORTED_VERSION), and what it returns never holds more elements than the
 * frame has bytes: no count sizes anything before the bytes behind it are known to be there.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import * as k from "../../src/kafka/protocol/index.js";
import { parseKafkaFixtures } from "./fixtures/fixture-format.js";
import { FIXTURE_MODULES } from "./fixtures/index.js";

const requests: Buffer[] = [];
for (const mod of FIXTURE_MODULES.values()) {
  for (const [name, frame] of parseKafkaFixtures(mod.TEXT))
    if (name.endsWith("-request")) requests.push(frame);
}

/** Array elements and bytes of strings and views in a decoded value. */
function weight(v: unknown): number {
  if (typeof v === "string") return Buffer.byteLength(v);
  if (Buffer.isBuffer(v)) return v.length;
  if (Array.isArray(v)) return v.length + v.reduce((n: number, x) => n + weight(x), 0);
  if (v !== null && typeof v === "object") return Object.values(v).reduce((n: number, x) => n + weight(x), 0);
  return 0;
}

/** Decodes a frame; a refusal must be typed, and a result must be no heavier than the frame. */
function decodeOrRefuse(frame: Buffer): boolean {
  try {
    const { request } = k.decodeKafkaRequest(frame);
    assert.ok(weight(request) <= frame.length, `decoded ${weight(request)} from ${frame.length} bytes`);
    return true;
  } catch (e) {
    if (!(e instanceof ConchError)) throw e;
    assert.ok(
      e.code === ErrorCode.MALFORMED_REQUEST || e.code === ErrorCode.UNSUPPORTED_VERSION,
      `unexpected ${e.codeName}: ${e.message}`,
    );
    return false;
  }
}

/** A frame with a correct size field around `body`, for a given API and version. */
function frameOf(apiKey: number, version: number, body: Uint8Array): Buffer {
  const head = Buffer.alloc(14);
  head.writeInt32BE(10 + body.length, 0);
  head.writeInt16BE(apiKey, 4);
  head.writeInt16BE(version, 6);
  head.writeInt32BE(1, 8);
  head.writeInt16BE(-1, 12); // client id null
  return Buffer.concat([head, body]);
}

/** A copy of `frame` cut to `n` bytes, its size field saying so. */
function truncated(frame: Buffer, n: number): Buffer {
  const cut = Buffer.from(frame.subarray(0, n));
  if (n >= 4) cut.writeInt32BE(n - 4, 0);
  return cut;
}

test("kafka fuzz: the golden requests decode", () => {
  assert.ok(requests.length > 40);
  for (const frame of requests) assert.ok(decodeOrRefuse(frame));
});

test("kafka fuzz: random bodies for every supported API and version are decoded or refused with the typed error", () => {
  const apis = fc.constantFrom(...k.SUPPORTED_APIS);
  fc.assert(
    fc.property(apis, fc.nat(10), fc.uint8Array({ maxLength: 300 }), (api, v, body) => {
      decodeOrRefuse(frameOf(api.apiKey, api.min + (v % (api.max - api.min + 1)), body));
    }),
    { numRuns: 5000 },
  );
});

test("kafka fuzz: random frames, size field and header included, are decoded or refused with the typed error", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      decodeOrRefuse(Buffer.from(bytes));
    }),
    { numRuns: 3000 },
  );
});

test("kafka fuzz: every truncation of every golden request is refused as malformed", () => {
  for (const frame of requests) {
    for (let n = 0; n < frame.length; n++) {
      const cut = truncated(frame, n);
      assert.throws(
        () => k.decodeKafkaRequest(cut),
        (e: unknown) => e instanceof ConchError && e.code === ErrorCode.MALFORMED_REQUEST,
        `${frame.length}-byte frame cut to ${n}`,
      );
    }
  }
});

test("kafka fuzz: golden requests with bytes changed, inserted or cut out are decoded or refused with the typed error", () => {
  const mutation = fc.record({
    frame: fc.constantFrom(...requests),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }),
    kind: fc.constantFrom("overwrite", "insert", "delete"),
  });
  fc.assert(
    fc.property(mutation, ({ frame, at, bytes, kind }) => {
      // Past the size field, so that the size can be fixed up to match and the body is what is tested.
      const p = 4 + (at % (frame.length - 4));
      let body: Buffer;
      if (kind === "overwrite") {
        body = Buffer.from(frame);
        body.set(bytes.subarray(0, frame.length - p), p);
      } else if (kind === "insert") {
        body = Buffer.concat([frame.subarray(0, p), bytes, frame.subarray(p)]);
      } else {
        body = Buffer.concat([
          frame.subarray(0, p),
          frame.subarray(Math.min(frame.length, p + bytes.length)),
        ]);
      }
      body.writeInt32BE(body.length - 4, 0);
      decodeOrRefuse(body);
    }),
    { numRuns: 10000 },
  );
});

test("kafka fuzz: 2^31 - 1 written over any four bytes of a golden request sizes nothing from it", () => {
  let forged = 0;
  let positions = 0;
  for (const frame of requests) {
    // Every int32 position past the header, set to 0x7fffffff: wherever a count lives, it is refused.
    for (let p = 14; p + 4 <= frame.length; p++) {
      const f = Buffer.from(frame);
      f.writeInt32BE(0x7fff_ffff, p);
      positions++;
      if (!decodeOrRefuse(f)) forged++;
    }
  }
  // Many positions hold a count, a length or a version and are refused; the rest decode (a timeout,
  // bytes inside a string).
  assert.ok(forged > positions / 4, `${forged} of ${positions} refused`);
});

test("kafka fuzz: the record batch cursor on mutated produced batches only ever throws INVALID_BATCH", () => {
  const batches: Buffer[] = [];
  for (const frame of requests) {
    const { header, request } = k.decodeKafkaRequest(frame);
    if (header.apiKey !== k.ApiKey.PRODUCE) continue;
    for (const t of (request as k.ProduceRequest).topics)
      for (const p of t.partitions) if (p.records) batches.push(p.records);
  }
  assert.ok(batches.length >= 3);
  fc.assert(
    fc.property(
      fc.constantFrom(...batches),
      fc.nat(),
      fc.integer({ min: 1, max: 255 }),
      fc.boolean(),
      (batch, at, xor, fixCrc) => {
        const b = Buffer.from(batch);
        b[at % b.length] = b[at % b.length]! ^ xor;
        if (fixCrc && b.length > k.RECORDS_AT) b.writeUInt32BE(k.recordBatchCrc(b, 0, b.length), k.CRC_AT);
        try {
          const c = new k.RecordBatchCursor(b);
          while (c.nextBatch()) while (c.nextRecord()) while (c.nextHeader());
        } catch (e) {
          assert.ok(e instanceof ConchError && e.code === ErrorCode.INVALID_BATCH, String(e));
        }
      },
    ),
    { numRuns: 5000 },
  );
});
