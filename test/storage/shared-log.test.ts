/**
 * The shared log's file (docs/shared-log.md, "Step 2, designed"): entries read back in order and
 * whole after a reopen, a torn or damaged tail cut at the first bad entry with everything after it,
 * rolls, and retirement only of the oldest segments whose every span was spilled, after a sync.
 */
import assert from "node:assert/strict";
import { appendFileSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import type { AppendListener, AppendResult } from "../../src/storage/pending-append.js";
import {
  checkEntry,
  type EntrySpan,
  EntryStatus,
  encodeRecordsEntry,
  encodeTopicDeleted,
  readEntry,
} from "../../src/storage/shared-log/entry.js";
import { segmentFileName } from "../../src/storage/shared-log/segment.js";
import { SharedLog, type SharedLogOptions } from "../../src/storage/shared-log/shared-log.js";
import { withTempDir } from "./helpers.js";

const MAX = 1 << 20;

function entry(i: number, batchBytes = 40): Buffer {
  const spans: EntrySpan[] = [
    { partition: i % 7, baseOffset: i * 3, records: 2 },
    { partition: 100 + i, baseOffset: 2 ** 40 + i, records: 1 },
  ];
  return encodeRecordsEntry(`topic-${i % 3}`, spans, Buffer.alloc(batchBytes, i & 0xff));
}

/** Appends and resolves once the listener is told (written, or fsynced when `durable`). */
function appendAndWait(log: SharedLog, bytes: Buffer, durable = false): Promise<AppendResult> {
  return new Promise((resolve, reject) => {
    const listener: AppendListener = { appended: resolve, appendFailed: reject };
    log.append(bytes, durable, listener);
  });
}

async function openLog(dir: string, options: SharedLogOptions = {}) {
  return SharedLog.open(dir, { syncFs: async () => {}, ...options });
}

test("entries come back in order, whole, at the positions they were given", async () => {
  await withTempDir(async (dir) => {
    const { log, entries } = await openLog(dir);
    assert.equal(entries.length, 0);
    const written = [entry(0), encodeTopicDeleted("topic-1"), entry(2, 1000)];
    const positions = await Promise.all(written.map((e) => appendAndWait(log, e).then((r) => r.baseOffset)));
    assert.deepEqual(positions, [0, written[0]!.length, written[0]!.length + written[1]!.length]);
    assert.equal(log.writtenPosition, log.endPosition);
    await log.close();
    const again = await openLog(dir);
    assert.deepEqual(
      again.entries.map((e) => e.position),
      positions,
    );
    for (let i = 0; i < written.length; i++) {
      const want = readEntry(written[i]!, 0, written[i]!.length);
      const got = again.entries[i]!;
      assert.equal(got.kind, want.kind);
      assert.equal(got.topic, want.topic);
      assert.deepEqual(got.spans, want.spans);
      assert.deepEqual(got.batch, want.batch);
    }
    // Appends go on after what was read back.
    const next = await appendAndWait(again.log, entry(3));
    assert.equal(next.baseOffset, positions[2]! + written[2]!.length);
    await again.log.close();
  });
});

test("a durable append is told once an fsync covers it", async () => {
  await withTempDir(async (dir) => {
    const { log } = await openLog(dir);
    const e = entry(1);
    const r = await appendAndWait(log, e, true);
    assert.ok(log.flushedPosition >= r.baseOffset + e.length);
    await log.close();
  });
});

test("a log cut at any byte of its last entry keeps exactly the entries before it", async () => {
  await withTempDir(async (dir) => {
    const { log } = await openLog(dir);
    const written = [entry(0), entry(1), entry(2)];
    for (const e of written) await appendAndWait(log, e);
    await log.close();
    const path = join(dir, segmentFileName(0));
    const whole = readFileSync(path);
    const lastStart = written[0]!.length + written[1]!.length;
    for (let cut = lastStart + 1; cut < whole.length; cut += 7) {
      writeFileSync(path, whole.subarray(0, cut));
      const again = await openLog(dir);
      assert.equal(again.entries.length, 2, `cut at ${cut}`);
      assert.equal(again.log.endPosition, lastStart);
      assert.equal(statSync(path).size, lastStart, "the torn tail is cut from the file");
      await again.log.close();
    }
  });
});

test("a damaged entry ends the log: later entries and later segments are dropped", async () => {
  await withTempDir(async (dir) => {
    const { log } = await openLog(dir, { segmentBytes: 1024 });
    const written: Buffer[] = [];
    for (let i = 0; i < 30; i++) {
      written.push(entry(i, 100));
      await appendAndWait(log, written[i]!);
    }
    assert.ok(log.segmentCount > 3);
    await log.close();
    // One bit of the second entry's batch flipped.
    const path = join(dir, segmentFileName(0));
    const bytes = readFileSync(path);
    bytes[written[0]!.length + written[1]!.length - 5]! ^= 0x10;
    writeFileSync(path, bytes);
    const again = await openLog(dir, { segmentBytes: 1024 });
    assert.equal(again.entries.length, 1);
    assert.deepEqual(readdirSync(dir), [segmentFileName(0)]);
    assert.equal(again.log.endPosition, written[0]!.length);
    await again.log.close();
  });
});

test("zeros past the last entry (a file extended but not written) end the log there", async () => {
  await withTempDir(async (dir) => {
    const { log } = await openLog(dir);
    await appendAndWait(log, entry(0));
    await log.close();
    appendFileSync(join(dir, segmentFileName(0)), Buffer.alloc(4096));
    const again = await openLog(dir);
    assert.equal(again.entries.length, 1);
    assert.equal(again.log.endPosition, entry(0).length);
    await again.log.close();
  });
});

test("a segment that does not start where the one before ends is dropped with what follows", async () => {
  await withTempDir(async (dir) => {
    const { log } = await openLog(dir, { segmentBytes: 1024 });
    for (let i = 0; i < 20; i++) await appendAndWait(log, entry(i, 100));
    await log.close();
    const names = readdirSync(dir).sort();
    assert.ok(names.length >= 3);
    // The first segment loses its last byte: the second no longer follows it.
    const first = join(dir, names[0]!);
    truncateSync(first, statSync(first).size - 1);
    const again = await openLog(dir, { segmentBytes: 1024 });
    assert.deepEqual(readdirSync(dir), [names[0]]);
    await again.log.close();
  });
});

test("a segment file longer than any the log writes is refused before it is read", async () => {
  await withTempDir(async (dir) => {
    writeFileSync(join(dir, segmentFileName(0)), Buffer.alloc(5000));
    await assert.rejects(
      openLog(dir, { segmentBytes: 1024, maxEntryBytes: 2048 }),
      /more than a shared log segment/,
    );
  });
});

test("rolls: an entry never straddles segments, and one larger than a segment has one alone", async () => {
  await withTempDir(async (dir) => {
    const { log } = await openLog(dir, { segmentBytes: 1024 });
    const sizes: number[] = [];
    for (let i = 0; i < 12; i++) {
      const e = entry(i, i === 6 ? 3000 : 150);
      sizes.push(e.length);
      await appendAndWait(log, e);
    }
    await log.close();
    for (const name of readdirSync(dir)) {
      const size = statSync(join(dir, name)).size;
      assert.ok(size <= 1024 || size === sizes[6], `${name}: ${size}`);
    }
    const again = await openLog(dir, { segmentBytes: 1024 });
    assert.equal(again.entries.length, 12);
    await again.log.close();
  });
});

test("retirement: oldest segments first, only when every span is spilled, after a sync that started after", async () => {
  await withTempDir(async (dir) => {
    const events: string[] = [];
    let syncFails = false;
    const syncFs = async () => {
      events.push("sync");
      if (syncFails) throw new Error("sync failed");
    };
    const { log } = await openLog(dir, { segmentBytes: 1024, syncFs });
    const positions: number[] = [];
    for (let i = 0; i < 20; i++) {
      const p = (await appendAndWait(log, entry(i, 100))).baseOffset;
      log.addSpans(p, 2);
      positions.push(p);
    }
    const segments = log.segmentCount;
    assert.ok(segments >= 4);
    assert.equal(await log.retire(), 0, "nothing spilled: nothing retired");
    assert.deepEqual(events, []);
    // Spill everything but the first entry: the first segment holds the others back.
    for (const p of positions.slice(1)) {
      log.spilled(p);
      log.spilled(p);
    }
    assert.equal(await log.retire(), 0);
    log.spilled(positions[0]!);
    assert.equal(await log.retire(), 0, "one span of the first entry is still deferred");
    log.spilled(positions[0]!);
    syncFails = true;
    const before = readdirSync(dir);
    await assert.rejects(log.retire(), /sync failed/);
    // The active segment, all spilled, was rolled before the sync; nothing was deleted.
    assert.equal(log.segmentCount, segments + 1);
    for (const name of before)
      assert.ok(readdirSync(dir).includes(name), `${name} kept when the sync failed`);
    syncFails = false;
    events.length = 0;
    // Every span spilled: the active segment is rolled and all of them go, after one sync.
    assert.equal(await log.retire(), segments);
    assert.deepEqual(events, ["sync"]);
    assert.equal(log.segmentCount, 1);
    assert.deepEqual(readdirSync(dir), [segmentFileName(log.endPosition)]);
    assert.throws(() => log.spilled(positions[0]!), /no segment holds/);
    // A new entry goes on from where the old ones ended.
    const next = await appendAndWait(log, entry(99));
    assert.equal(next.baseOffset, positions.at(-1)! + entry(19, 100).length);
    await log.close();
    const again = await openLog(dir, { segmentBytes: 1024 });
    assert.deepEqual(
      again.entries.map((e) => e.position),
      [next.baseOffset],
    );
    await again.log.close();
  });
});

test("more spills than spans is a caller's bug, told at once", async () => {
  await withTempDir(async (dir) => {
    const { log } = await openLog(dir);
    const p = (await appendAndWait(log, entry(0))).baseOffset;
    log.addSpans(p, 1);
    log.spilled(p);
    assert.throws(() => log.spilled(p), /more spills than spans/);
    await log.close();
    assert.throws(() => log.append(entry(1), false, { appended() {}, appendFailed() {} }), /closed/);
  });
});

test("checkEntry: what encode makes reads back; any one flipped bit or cut is refused", () => {
  const spanArb = fc.record({
    partition: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
    baseOffset: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    records: fc.integer({ min: 1, max: 2 ** 32 - 1 }),
  });
  fc.assert(
    fc.property(
      fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/),
      fc.array(spanArb, { minLength: 1, maxLength: 8 }),
      fc.uint8Array({ minLength: 1, maxLength: 200 }),
      fc.nat(),
      (topic, spans, batch, flip) => {
        const e = encodeRecordsEntry(topic, spans, batch);
        assert.equal(checkEntry(e, 0, e.length, MAX), e.length);
        const read = readEntry(e, 0, e.length);
        assert.equal(read.topic, topic);
        assert.deepEqual(
          read.spans,
          spans.map((s) => ({ ...s })),
        );
        assert.deepEqual(new Uint8Array(read.batch), batch);
        const bad = Buffer.from(e);
        const bit = flip % (e.length * 8);
        bad[bit >> 3]! ^= 1 << (bit & 7);
        assert.ok(checkEntry(bad, 0, bad.length, MAX) < 0, `bit ${bit}`);
        const cut = flip % e.length;
        assert.equal(checkEntry(e, 0, cut, MAX) < 0, true);
      },
    ),
  );
  const e = entry(0);
  assert.equal(checkEntry(e, 0, e.length, e.length - 1), EntryStatus.TOO_LARGE);
  assert.equal(checkEntry(Buffer.alloc(16), 0, 16, MAX), EntryStatus.NO_ENTRY);
});

test("a log appended to since the last retirement keeps its active segment; one gone quiet lets it go", async () => {
  await withTempDir(async (dir) => {
    let syncs = 0;
    const { log } = await openLog(dir, {
      syncFs: async () => {
        syncs++;
      },
    });
    const p = (await appendAndWait(log, entry(0))).baseOffset;
    log.addSpans(p, 1);
    log.spilled(p);
    assert.equal(await log.retire(), 0, "appended since: not rolled");
    assert.equal(syncs, 0, "and nothing synced");
    assert.ok(log.holdsEntries);
    assert.equal(await log.retire(), 1, "quiet since the last call: rolled and retired");
    assert.equal(syncs, 1);
    assert.equal(log.holdsEntries, false);
    const q = (await appendAndWait(log, entry(1))).baseOffset;
    log.addSpans(q, 1);
    log.spilled(q);
    assert.equal(await log.retire(true), 1, "a stop rolls it whatever was appended");
    await log.close();
  });
});
