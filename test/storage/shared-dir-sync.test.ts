import assert from "node:assert/strict";
import { test } from "node:test";
import { sharedDirSync } from "../../src/storage/shared-dir-sync.js";

/** A fake fsync: records each start and finishes when the test says. */
function fakeSync(): { sync: (dir: string) => Promise<void>; started: string[]; finish(err?: Error): void } {
  const started: string[] = [];
  const pending: { ok: () => void; fail: (e: Error) => void }[] = [];
  return {
    started,
    sync: (dir) =>
      new Promise<void>((ok, fail) => {
        started.push(dir);
        pending.push({ ok, fail });
      }),
    finish(err) {
      const p = pending.shift()!;
      if (err === undefined) p.ok();
      else p.fail(err);
    },
  };
}

const turn = (): Promise<void> => new Promise((ok) => setImmediate(ok));

test("fsyncs of a directory asked for while one runs share one that starts after them", async () => {
  const fake = fakeSync();
  const sync = sharedDirSync(fake.sync);
  let firstDone = false;
  const first = sync("t").then(() => {
    firstDone = true;
  });
  // Asked while the first runs: it may have started before their changes, so they wait for the next.
  const done: number[] = [];
  const later = Array.from({ length: 100 }, (_, i) => sync("t").then(() => done.push(i)));
  const other = sync("u");
  assert.deepEqual(fake.started, ["t", "u"]);
  fake.finish();
  await first;
  await turn();
  assert.ok(firstDone);
  assert.equal(done.length, 0, "none of the later callers is answered by the fsync that ran when they asked");
  assert.deepEqual(fake.started, ["t", "u", "t"]);
  fake.finish(); // "u"
  fake.finish(); // the second "t"
  await Promise.all([...later, other]);
  assert.equal(done.length, 100);
  assert.equal(fake.started.length, 3, "101 calls for t made two fsyncs");
});

test("a failed shared fsync fails everyone waiting on it, and the next call starts afresh", async () => {
  const fake = fakeSync();
  const sync = sharedDirSync(fake.sync);
  const a = sync("t");
  const b = sync("t");
  const c = sync("t");
  fake.finish(new Error("EIO"));
  await assert.rejects(a, /EIO/);
  await turn();
  fake.finish(new Error("EIO again"));
  await assert.rejects(b, /EIO again/);
  await assert.rejects(c, /EIO again/);
  const d = sync("t");
  assert.equal(fake.started.length, 3);
  fake.finish();
  await d;
});
