import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { MetaEvent } from "../../src/cluster/etcd/meta-store.js";
import { etcdForSuite, skipWithoutEtcd } from "./etcd-harness.js";

describe("the etcd3 MetaStore against a real etcd", { skip: skipWithoutEtcd }, () => {
  const suite = etcdForSuite(before, after);

  test("a create-if-absent txn succeeds once, and its revision is the key's create revision", async () => {
    const key = "/t/create/a";
    const first = await suite.store.txn(
      [{ key, target: "create", revision: 0 }],
      [{ type: "put", key, value: "1" }],
    );
    const second = await suite.store.txn(
      [{ key, target: "create", revision: 0 }],
      [{ type: "put", key, value: "2" }],
    );
    assert.equal(first.succeeded, true);
    assert.equal(second.succeeded, false);
    const entry = await suite.store.get(key);
    assert.equal(entry?.value, "1");
    assert.equal(entry?.createRevision, first.revision);
  });

  test("a compare-and-swap on mod revision fails once the key moved", async () => {
    const key = "/t/cas/a";
    await suite.store.txn([], [{ type: "put", key, value: "v1" }]);
    const before = await suite.store.get(key);
    assert.ok(before);
    const ok = await suite.store.txn(
      [{ key, target: "mod", revision: before.modRevision }],
      [{ type: "put", key, value: "v2" }],
    );
    const stale = await suite.store.txn(
      [{ key, target: "mod", revision: before.modRevision }],
      [{ type: "put", key, value: "v3" }],
    );
    assert.equal(ok.succeeded, true);
    assert.equal(stale.succeeded, false);
    assert.equal((await suite.store.get(key))?.value, "v2");
  });

  test("a prefix read and a watch from the next revision see every later change once, in order", async () => {
    await suite.store.txn([], [{ type: "put", key: "/t/w/0", value: "a" }]);
    const snap = await suite.store.getPrefix("/t/w/");
    assert.deepEqual(
      snap.entries.map((e) => e.key),
      ["/t/w/0"],
    );
    const seen: MetaEvent[] = [];
    let wake: () => void = () => {};
    const watch = await suite.store.watchPrefix("/t/w/", snap.revision + 1, {
      events: (events) => {
        seen.push(...events);
        if (seen.length >= 3) wake();
      },
      failed: (err) => assert.fail(err),
    });
    const done = new Promise<void>((resolve) => {
      wake = resolve;
    });
    await suite.store.txn([], [{ type: "put", key: "/t/w/1", value: "b" }]);
    await suite.store.txn([], [{ type: "put", key: "/t/other", value: "not watched" }]);
    await suite.store.txn([], [{ type: "delete", key: "/t/w/", prefix: true }]);
    await done;
    await watch.cancel();
    assert.deepEqual(
      seen.map((e) => (e.type === "put" ? `put ${e.entry.key}=${e.entry.value}` : `delete ${e.key}`)),
      ["put /t/w/1=b", "delete /t/w/0", "delete /t/w/1"],
    );
  });

  test("keys under a session's lease go when it is revoked, and expire when it is released", async () => {
    const renewals: number[] = [];
    const session = await suite.store.openSession(2, { renewed: (t) => renewals.push(t), lost: () => {} });
    assert.ok(renewals.length >= 1, "the grant counts as the first renewal");
    assert.ok((renewals[0] ?? 0) > performance.now(), "the deadline is in the future");
    await suite.store.txn([], [{ type: "put", key: "/t/lease/a", value: "x", leased: session }]);
    await session.revoke();
    assert.equal(await suite.store.get("/t/lease/a"), undefined);

    const other = await suite.store.openSession(2, { renewed: () => {}, lost: () => {} });
    await suite.store.txn([], [{ type: "put", key: "/t/lease/b", value: "y", leased: other }]);
    const snap = await suite.store.getPrefix("/t/lease/");
    const deleted = new Promise<number>((resolve) => {
      void suite.store.watchPrefix("/t/lease/", snap.revision + 1, {
        events: (events) => {
          if (events.some((e) => e.type === "delete")) resolve(performance.now());
        },
        failed: () => {},
      });
    });
    const releasedAt = performance.now();
    other.release();
    const gone = (await deleted) - releasedAt;
    // Expiry is counted from the last keepalive, at most a TTL before the release.
    assert.ok(gone < 4000, `expired ${Math.round(gone)} ms after the release`);
  });
});
