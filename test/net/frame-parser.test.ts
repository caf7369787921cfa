import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ConchError, ErrorCode } from "../../src/format/index.js";
import { FrameParser } from "../../src/net/index.js";

/** A wire frame: u32 size + payload. */
function wire(payload: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(4 + payload.length);
  b.writeUInt32BE(payload.length, 0);
  b.set(payload, 4);
  return b;
}

function payloads(count: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++)
    out.push(Buffer.from(Array.from({ length: (i * 7) % 23 }, (_, j) => (i * 31 + j) & 0xff)));
  return out;
}

/** Pushes the chunks in order, draining frames after each; returns copies of the frames. */
function feed(parser: FrameParser, chunks: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (const c of chunks) {
    parser.push(c);
    for (let f = parser.next(); f !== null; f = parser.next()) out.push(Buffer.from(f));
  }
  return out;
}

/** Records the sizes of every Buffer.allocUnsafe call made while `fn` runs. */
function allocations<T>(fn: () => T): { result: T; sizes: number[] } {
  const original = Buffer.allocUnsafe;
  const sizes: number[] = [];
  Buffer.allocUnsafe = (n: number) => {
    sizes.push(n);
    return original(n);
  };
  try {
    return { result: fn(), sizes };
  } finally {
    Buffer.allocUnsafe = original;
  }
}

function isTooLarge(e: unknown): boolean {
  return e instanceof ConchError && e.code === ErrorCode.FRAME_TOO_LARGE;
}

test("a frame whole inside one chunk is a view of the chunk, with no allocation", () => {
  const chunk = Buffer.concat([wire(Buffer.from("hello")), wire(Buffer.from("world!"))]);
  const parser = new FrameParser({ maxFrameBytes: 100 });
  const { result, sizes } = allocations(() => {
    parser.push(chunk);
    return [parser.next(), parser.next(), parser.next()];
  });
  const [a, b, end] = result;
  assert.equal(a?.toString(), "hello");
  assert.equal(b?.toString(), "world!");
  assert.equal(end, null);
  assert.equal(a?.buffer, chunk.buffer);
  assert.equal(a?.byteOffset, chunk.byteOffset + 4);
  assert.equal(b?.byteOffset, chunk.byteOffset + 13);
  assert.deepEqual(sizes, []);
  assert.equal(parser.bufferedBytes, 0);
  assert.equal(parser.midFrame, false);
});

test("a frame split over chunks is assembled in one buffer allocated once at its size", () => {
  const payload = Buffer.from("0123456789abcdefghij");
  const bytes = wire(payload);
  const parser = new FrameParser({ maxFrameBytes: 100 });
  const { result, sizes } = allocations(() => {
    const frames: (Buffer | null)[] = [];
    for (const piece of [
      bytes.subarray(0, 2),
      bytes.subarray(2, 9),
      bytes.subarray(9, 15),
      bytes.subarray(15),
    ]) {
      parser.push(piece);
      frames.push(parser.next());
    }
    return frames;
  });
  assert.deepEqual(result.slice(0, 3), [null, null, null]);
  assert.deepEqual(result[3], payload);
  assert.deepEqual(sizes, [payload.length]);
});

test("partial bytes are copied as they arrive, so the parser holds only the frame buffer", () => {
  const parser = new FrameParser({ maxFrameBytes: 1000 });
  const bytes = wire(Buffer.alloc(500, 7));
  parser.push(bytes.subarray(0, 100));
  assert.equal(parser.next(), null);
  assert.equal(parser.bufferedBytes, 500); // the frame buffer; the first chunk is released
  assert.equal(parser.midFrame, true);
  parser.push(bytes.subarray(100));
  assert.deepEqual(parser.next(), Buffer.alloc(500, 7));
  assert.equal(parser.bufferedBytes, 0);
});

test("a stream of frames split at every byte boundary yields exactly the frames sent", () => {
  const sent = payloads(12);
  const stream = Buffer.concat(sent.map(wire));
  for (let cut = 0; cut <= stream.length; cut++) {
    const parser = new FrameParser({ maxFrameBytes: 64 });
    assert.deepEqual(feed(parser, [stream.subarray(0, cut), stream.subarray(cut)]), sent, `cut at ${cut}`);
    assert.equal(parser.midFrame, false);
  }
});

test("a stream fed one byte at a time yields exactly the frames sent", () => {
  const sent = payloads(20);
  const stream = Buffer.concat(sent.map(wire));
  const chunks: Buffer[] = [];
  for (let i = 0; i < stream.length; i++) chunks.push(stream.subarray(i, i + 1));
  const parser = new FrameParser({ maxFrameBytes: 64 });
  assert.deepEqual(feed(parser, chunks), sent);
});

test("an empty frame is a frame", () => {
  const parser = new FrameParser({ maxFrameBytes: 0 });
  parser.push(Buffer.from([0, 0, 0, 0, 0, 0]));
  assert.deepEqual(parser.next(), Buffer.alloc(0));
  assert.equal(parser.next(), null);
  assert.equal(parser.midFrame, true); // two bytes of the next size field
});

test("a size of exactly the maximum is accepted, one more is refused before anything is buffered", () => {
  const ok = new FrameParser({ maxFrameBytes: 10 });
  ok.push(wire(Buffer.alloc(10, 1)));
  assert.deepEqual(ok.next(), Buffer.alloc(10, 1));

  const parser = new FrameParser({ maxFrameBytes: 10 });
  const { sizes } = allocations(() => {
    parser.push(Buffer.from([0, 0, 0, 11]));
    assert.throws(() => parser.next(), isTooLarge);
  });
  assert.deepEqual(sizes, []);
  assert.equal(parser.bufferedBytes, 0);
  // The stream has lost its framing: every later call fails the same way.
  assert.throws(() => parser.push(Buffer.alloc(11)), isTooLarge);
  assert.throws(() => parser.next(), isTooLarge);
});

test("a huge length prefix is refused without allocating, even when split", () => {
  const parser = new FrameParser({ maxFrameBytes: 1 << 20 });
  const { sizes } = allocations(() => {
    parser.push(Buffer.from([0xff, 0xff]));
    assert.equal(parser.next(), null);
    parser.push(Buffer.from([0xff, 0xff, 1, 2, 3]));
    assert.throws(
      () => parser.next(),
      (e: unknown) => isTooLarge(e) && /4294967295/.test((e as Error).message),
    );
  });
  assert.deepEqual(sizes, []);
});

test("the frame before an oversized one is still yielded", () => {
  const parser = new FrameParser({ maxFrameBytes: 8 });
  parser.push(Buffer.concat([wire(Buffer.from("ok")), wire(Buffer.alloc(9))]));
  assert.equal(parser.next()?.toString(), "ok");
  assert.throws(() => parser.next(), isTooLarge);
});

test("refuses a bad maximum", () => {
  assert.throws(() => new FrameParser({ maxFrameBytes: -1 }), RangeError);
  assert.throws(() => new FrameParser({ maxFrameBytes: 1.5 }), RangeError);
});

/** Cuts `stream` at the given points (sorted, deduplicated, inside the stream). */
function split(stream: Buffer, points: number[]): Buffer[] {
  const cuts = [...new Set(points.map((p) => p % (stream.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const c of cuts) {
    chunks.push(stream.subarray(from, c));
    from = c;
  }
  chunks.push(stream.subarray(from));
  return chunks;
}

test("fuzz: random frames, some over the maximum, split at random points", () => {
  const max = 48;
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 60 }), { maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 20 }),
      fc.nat(),
      (sent, points, truncateBy) => {
        const whole = Buffer.concat(sent.map(wire));
        // Sometimes cut the stream short, mid frame.
        const stream = whole.subarray(
          0,
          whole.length - (truncateBy % 5 === 0 ? truncateBy % (whole.length + 1) : 0),
        );
        const expected: Buffer[] = [];
        let at = 0;
        let refused = false;
        for (const p of sent) {
          if (stream.length - at < 4) break;
          if (p.length > max) {
            refused = true;
            break;
          }
          if (stream.length - at < 4 + p.length) break;
          expected.push(Buffer.from(p));
          at += 4 + p.length;
        }
        const parser = new FrameParser({ maxFrameBytes: max });
        const got: Buffer[] = [];
        let threw: unknown = null;
        const { sizes } = allocations(() => {
          try {
            got.push(...feed(parser, split(stream, points)));
          } catch (e) {
            threw = e;
          }
        });
        assert.deepEqual(got, expected);
        if (refused) assert.ok(isTooLarge(threw), String(threw));
        else assert.equal(threw, null);
        for (const s of sizes) assert.ok(s <= max, `allocated ${s}`);
      },
    ),
    { numRuns: 300 },
  );
});

test("fuzz: random bytes never throw anything but FRAME_TOO_LARGE, nor allocate past the maximum", () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 20 }),
      fc.integer({ min: 0, max: 300 }),
      (chunks, max) => {
        const parser = new FrameParser({ maxFrameBytes: max });
        const { sizes } = allocations(() => {
          try {
            for (const f of feed(
              parser,
              chunks.map((c) => Buffer.from(c)),
            ))
              assert.ok(f.length <= max);
          } catch (e) {
            assert.ok(isTooLarge(e), String(e));
          }
        });
        for (const s of sizes) assert.ok(s <= max, `allocated ${s}`);
      },
    ),
    { numRuns: 500 },
  );
});

test("readTarget/wrote: bytes read straight into a frame being assembled make the same frames", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 20 }),
      fc.integer({ min: 1, max: 200 }),
      (cuts, minBytes) => {
        const frames = [Buffer.alloc(700, 1), ...payloads(5), Buffer.alloc(1000, 2), Buffer.alloc(3, 3)];
        for (let i = 0; i < frames[0]!.length; i++) frames[0]![i] = i & 0xff;
        const stream = Buffer.concat(frames.map(wire));
        const parser = new FrameParser({ maxFrameBytes: 2000 });
        const got: Buffer[] = [];
        let at = 0;
        let i = 0;
        let direct = 0;
        while (at < stream.length) {
          const want = cuts[i++ % cuts.length]!;
          const target = parser.readTarget(minBytes);
          if (target !== null) {
            // The "socket" writes at most what the target holds, like a read into it would.
            const n = Math.min(want, target.length, stream.length - at);
            target.set(stream.subarray(at, at + n));
            parser.wrote(n);
            direct += n;
            at += n;
          } else {
            parser.push(stream.subarray(at, at + want));
            at += want;
          }
          for (let f = parser.next(); f !== null; f = parser.next()) got.push(Buffer.from(f));
        }
        assert.deepEqual(got, frames);
        assert.equal(parser.midFrame, false);
        if (minBytes <= 100 && cuts.every((c) => c < 50))
          assert.ok(direct > 0, "large frames were read directly");
      },
    ),
  );
});

test("readTarget is null while pushed bytes wait, and wrote() past the frame throws", () => {
  const parser = new FrameParser({ maxFrameBytes: 1000 });
  const w = wire(Buffer.alloc(500, 9));
  parser.push(w.subarray(0, 10));
  assert.equal(parser.next(), null);
  const target = parser.readTarget(1);
  assert.ok(target !== null);
  assert.equal(target.length, 494);
  assert.throws(() => parser.wrote(495), RangeError);
  parser.push(w.subarray(10, 11));
  assert.equal(parser.readTarget(1), null, "a pushed byte must be consumed first");
});

test("borrowing pushCopy: frames read into one reused buffer are the frames sent, whatever is left unread", () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 90 }), { minLength: 1, maxLength: 20 }),
      fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 20 }),
      (cuts, takes) => {
        const frames = [...payloads(12), Buffer.alloc(150, 7), Buffer.alloc(0)];
        const stream = Buffer.concat(frames.map(wire));
        const parser = new FrameParser({ maxFrameBytes: 1000 });
        // One buffer for every read, as the broker's scratch is shared by its connections.
        const scratch = Buffer.alloc(90);
        const got: Buffer[] = [];
        let borrowedSeen = 0;
        let at = 0;
        let i = 0;
        const take = (limit: number) => {
          for (let k = 0; k < limit; k++) {
            const f = parser.next();
            if (f === null) return;
            if (parser.lastFrameBorrowed) {
              borrowedSeen++;
              assert.equal(f.buffer, scratch.buffer, "a borrowed frame is a view of the read buffer");
            }
            got.push(Buffer.from(f));
          }
        };
        while (at < stream.length) {
          const n = Math.min(cuts[i % cuts.length]!, stream.length - at);
          stream.copy(scratch, 0, at, at + n);
          at += n;
          parser.pushCopy(scratch.subarray(0, n), true);
          // The owner handles some of the frames now (maybe none), leaves the rest unread...
          take(takes[i++ % takes.length]!);
          parser.ownBorrowed();
          // ...and the buffer is reused: what the parser kept must not change with it.
          scratch.fill(0xee);
        }
        take(Number.POSITIVE_INFINITY);
        assert.deepEqual(got, frames);
        assert.equal(parser.midFrame, false);
        if (takes.every((t) => t >= 3) && cuts.every((c) => c >= 60)) assert.ok(borrowedSeen > 0);
      },
    ),
    { numRuns: 300 },
  );
});

test("borrowing pushCopy: whole frames are views of the read buffer, flagged; assembled ones are not", () => {
  const parser = new FrameParser({ maxFrameBytes: 1000 });
  const a = Buffer.from("first");
  const b = Buffer.from("second");
  const c = Buffer.alloc(40, 3);
  const stream = Buffer.concat([wire(a), wire(b), wire(c)]);
  const read = Buffer.from(stream.subarray(0, stream.length - 10));
  parser.pushCopy(read, true);
  const f1 = parser.next()!;
  assert.deepEqual(Buffer.from(f1), a);
  assert.equal(parser.lastFrameBorrowed, true);
  assert.equal(f1.buffer, read.buffer);
  const f2 = parser.next()!;
  assert.deepEqual(Buffer.from(f2), b);
  assert.equal(parser.lastFrameBorrowed, true);
  assert.equal(parser.next(), null);
  parser.ownBorrowed();
  read.fill(0);
  parser.pushCopy(stream.subarray(stream.length - 10), true);
  const f3 = parser.next()!;
  assert.deepEqual(Buffer.from(f3), c);
  assert.equal(parser.lastFrameBorrowed, false, "assembled from two reads: a buffer of its own");
});
