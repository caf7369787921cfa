import assert from "node:assert/strict";
import { test } from "node:test";
import { GroupCommit, type SyncDone } from "../../src/storage/flusher.js";
import { PendingAppend } from "../../src/storage/pending-append.js";

/** A group commit over a counter of written bytes, whose fsyncs end when the test says. */
function harness() {
  const h = {
    written: 0,
    flushed: 0,
    running: [] as SyncDone[],
    started: 0,
    commit: null as unknown as GroupCommit,
    /** Ends the oldest running fsync, as the thread pool would: in a later tick. */
    async endOne(): Promise<void> {
      const done = h.running.shift();
      assert.ok(done !== undefined, "an fsync is running");
      done(null);
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  h.commit = new GroupCommit(
    0,
    () => h.written,
    (done) => {
      h.started++;
      h.running.push(done);
    },
    (offset) => {
      h.flushed = offset;
    },
    (err) => {
      throw err;
    },
  );
  return h;
}

function durableAppend(offset: number): PendingAppend {
  return new PendingAppend(offset, offset, null, 0, 0, true);
}

test("an interval fsync is one fsync: writes during it wait for the next interval, not another fsync", async () => {
  const h = harness();
  h.written = 10;
  h.commit.request();
  assert.equal(h.started, 1);
  // A producer goes on writing (acknowledged at once, nobody waits for an fsync).
  h.written = 20;
  await h.endOne();
  assert.equal(h.flushed, 10, "the fsync covers what was written when it started");
  assert.equal(h.started, 1, "no fsync chases the writes made during the first");
  assert.equal(h.running.length, 0);
  // The next interval asks again, and that fsync covers them.
  h.commit.request();
  assert.equal(h.started, 2);
  await h.endOne();
  assert.equal(h.flushed, 20);
});

test("a durable append written during an fsync gets the next one at once; two fsyncs at most", async () => {
  const h = harness();
  h.written = 10;
  h.commit.request();
  h.written = 20;
  const first = durableAppend(19);
  h.commit.add(first, 20);
  assert.equal(h.started, 2, "the second slot starts an fsync covering the waiting append");
  h.written = 30;
  const second = durableAppend(29);
  h.commit.add(second, 30);
  assert.equal(h.started, 2, "both slots busy: it waits for one to end");
  await h.endOne();
  assert.equal(h.started, 3, "a slot freed: the append still owed an fsync gets one");
  await h.endOne();
  await first.promise;
  await h.endOne();
  await second.promise;
  assert.equal(h.flushed, 30);
  h.written = 40;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(h.started, 3, "nothing owed, nothing asked: no fsync");
});
