import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { type DataWaiter, DataWaiters } from "../../src/storage/data-waiters.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { gate, settle, TestFileOps } from "./file-ops-fakes.js";
import { makeBatch, testConfig, withTempDir } from "./helpers.js";

test("waitForData wakes when the high watermark passes the offset", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    let woke = false;
    const waiting = log.waitForData(0, 60_000).then(() => {
      woke = true;
    });
    await settle();
    assert.equal(woke, false);
    assert.equal(log.waitingReaders, 1);
    await log.append(makeBatch("a", 1));
    await waiting;
    assert.equal(log.waitingReaders, 0);
    await log.waitForData(0, 60_000); // already past: resolves at once
    await log.close();
  });
});

test("waitForData resolves on timeout and on abort, and an aborted waiter leaves at once", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    await log.waitForData(0, 5);
    assert.equal(log.waitingReaders, 0);

    const controllers = Array.from({ length: 100 }, () => new AbortController());
    const waits = controllers.map((c) => log.waitForData(0, 60_000, c.signal));
    assert.equal(log.waitingReaders, 100);
    for (const c of controllers) c.abort();
    assert.equal(log.waitingReaders, 0, "removed synchronously on abort");
    await Promise.all(waits);

    const aborted = new AbortController();
    aborted.abort();
    await log.waitForData(0, 60_000, aborted.signal);
    assert.equal(log.waitingReaders, 0);
    await log.close();
  });
});

/** A waiter that records when it was told the wait ended. */
class Parked implements DataWaiter {
  readonly waitOffset: number;
  readonly waitDeadline: number;
  waitSlot = -1;
  ended = 0;
  constructor(offset: number, waitMs: number) {
    this.waitOffset = offset;
    this.waitDeadline = performance.now() + waitMs;
  }
  waitEnded(): void {
    this.ended++;
  }
}

async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !done(); i++) await new Promise((r) => setTimeout(r, 2));
  assert.ok(done(), what);
}

test("park: a parked waiter is told once when data passes its offset; unpark takes one out untold", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    const a = new Parked(0, 60_000);
    const b = new Parked(0, 60_000);
    const later = new Parked(1, 60_000);
    assert.equal(log.park(a), true);
    assert.equal(log.park(b), true);
    assert.equal(log.park(later), true);
    log.unpark(b);
    assert.equal(log.waitingReaders, 2);
    await log.append(makeBatch("a", 1));
    assert.deepEqual([a.ended, b.ended, later.ended], [1, 0, 0]);
    assert.equal(log.park(new Parked(0, 60_000)), false, "the data is already there");
    await log.append(makeBatch("b", 1));
    assert.deepEqual([a.ended, b.ended, later.ended], [1, 0, 1]);
    assert.equal(log.waitingReaders, 0);
    await log.close();
  });
});

test("park: deadlines end waits in order, and the shared timer outlives an empty list", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    // The first waiter arms the timer, then leaves with data: the timer stays, armed for it.
    const first = new Parked(0, 20);
    assert.equal(log.park(first), true);
    await log.append(makeBatch("a", 1));
    assert.equal(first.ended, 1);
    // Later deadlines than the armed one: the timer must re-arm for them when it fires.
    const soon = new Parked(1, 40);
    const never = new Parked(1, 60_000);
    log.park(soon);
    log.park(never);
    await until(() => soon.ended === 1, "the deadline ends the wait");
    assert.equal(never.ended, 0);
    assert.equal(log.waitingReaders, 1);
    log.unpark(never);
    assert.equal(log.waitingReaders, 0);
    await log.close();
    assert.equal(never.ended, 0, "an unparked waiter is not told at close");
  });
});

test("close tells every parked waiter", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    const ws = [new Parked(0, 60_000), new Parked(3, 60_000)];
    for (const w of ws) log.park(w);
    await log.close();
    assert.deepEqual(
      ws.map((w) => w.ended),
      [1, 1],
    );
    assert.equal(log.park(new Parked(9, 60_000)), false, "a closed log parks nothing");
  });
});

test("under flush=sync a waiter wakes only after the fsync", async () => {
  await withTempDir(async (dir) => {
    const ops = new TestFileOps();
    const log = await PartitionLog.open(dir, testConfig({ flush: "sync" }), undefined, { fileOps: ops });
    const held = gate();
    ops.syncGate = held.promise;
    let woke = false;
    const waiting = log.waitForData(0, 60_000).then(() => {
      woke = true;
    });
    const appended = log.append(makeBatch("a", 1));
    await ops.writes.reached(1);
    await settle();
    assert.equal(woke, false);
    held.open();
    ops.syncGate = null;
    await appended;
    await waiting;
    await log.close();
  });
});

test("close wakes every waiter", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    const waits = [log.waitForData(0, 60_000), log.waitForData(5, 60_000)];
    await log.close();
    await Promise.all(waits);
    assert.equal(log.waitingReaders, 0);
  });
});

test("DataWaiters: any mix of parks, unparks and notifies tells exactly the waiters passed, once", () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant("park" as const), who: fc.nat(19), offset: fc.nat(30) }),
    fc.record({ kind: fc.constant("unpark" as const), who: fc.nat(19) }),
    fc.record({ kind: fc.constant("notify" as const), hw: fc.nat(32) }),
  );
  fc.assert(
    fc.property(fc.array(op, { minLength: 20, maxLength: 200 }), (ops) => {
      const list = new DataWaiters();
      const told = new Array<number>(20).fill(0);
      const model = new Map<number, number>(); // who -> offset, while parked
      const waiters = Array.from({ length: 20 }, (_, who) => ({
        waitOffset: 0,
        waitDeadline: performance.now() + 60_000,
        waitSlot: -1,
        waitEnded: () => {
          told[who]!++;
        },
      }));
      let hw = 0;
      const expected = new Array<number>(20).fill(0);
      for (const o of ops) {
        if (o.kind === "park") {
          if (model.has(o.who)) continue;
          const w = waiters[o.who]!;
          w.waitOffset = o.offset;
          const parked = list.park(w, hw);
          assert.equal(parked, !(hw > o.offset));
          if (parked) model.set(o.who, o.offset);
        } else if (o.kind === "unpark") {
          list.unpark(waiters[o.who]!);
          model.delete(o.who);
        } else {
          hw = Math.max(hw, o.hw);
          for (const [who, offset] of [...model]) {
            if (hw > offset) {
              expected[who]!++;
              model.delete(who);
            }
          }
          list.notify(hw);
        }
        assert.equal(list.size, model.size);
      }
      assert.deepEqual(told, expected);
      list.wakeAll();
    }),
  );
});
