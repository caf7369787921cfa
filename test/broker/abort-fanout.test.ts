import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { test } from "node:test";
import { AbortTarget, abortListenerCount, subscribe, unsubscribe } from "../../src/broker/abort-fanout.js";

class Target extends AbortTarget {
  readonly #onAbort: () => void;
  constructor(onAbort: () => void) {
    super();
    this.#onAbort = onAbort;
  }
  signalAborted(): void {
    this.#onAbort();
  }
}

test("subscribe: many subscriptions share one listener, unsubscribing removes them, abort tells the rest once", () => {
  const ac = new AbortController();
  const calls: number[] = [];
  const targets: Target[] = [];
  for (let i = 0; i < 10_000; i++) {
    targets.push(new Target(() => calls.push(i)));
    subscribe(ac.signal, targets[i]!);
  }
  assert.equal(abortListenerCount(ac.signal), 10_000);
  for (let i = 0; i < 10_000; i += 2) unsubscribe(targets[i]!);
  unsubscribe(targets[0]!); // twice: nothing more happens
  assert.equal(abortListenerCount(ac.signal), 5_000);
  ac.abort();
  ac.abort();
  assert.deepEqual(
    calls,
    Array.from({ length: 5_000 }, (_, k) => 2 * k + 1),
    "each remaining target once, in subscription order",
  );
  assert.equal(abortListenerCount(ac.signal), 0);
});

test("subscribe: one shared listener per signal, kept across subscriptions until the signal aborts", () => {
  const ac = new AbortController();
  const ts = [new Target(() => {}), new Target(() => {})];
  for (const t of ts) subscribe(ac.signal, t);
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  for (const t of ts) unsubscribe(t);
  assert.equal(abortListenerCount(ac.signal), 0);
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  let called = 0;
  let unsubscribedCalled = 0;
  subscribe(ac.signal, new Target(() => called++));
  const gone = new Target(() => unsubscribedCalled++);
  subscribe(ac.signal, gone);
  unsubscribe(gone);
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  ac.abort();
  assert.equal(called, 1);
  assert.equal(unsubscribedCalled, 0);
  assert.equal(getEventListeners(ac.signal, "abort").length, 0);
});

test("a target that unsubscribes another during the abort keeps the other from being told", () => {
  const ac = new AbortController();
  const calls: string[] = [];
  const second = new Target(() => calls.push("second"));
  subscribe(
    ac.signal,
    new Target(() => {
      calls.push("first");
      unsubscribe(second);
    }),
  );
  subscribe(ac.signal, second);
  subscribe(ac.signal, new Target(() => calls.push("third")));
  ac.abort();
  assert.deepEqual(calls, ["first", "third"]);
});

test("a target subscribed to a second signal moves there: only the second one tells it", () => {
  const a = new AbortController();
  const b = new AbortController();
  let told = 0;
  const t = new Target(() => told++);
  subscribe(a.signal, t);
  subscribe(b.signal, t);
  assert.equal(abortListenerCount(a.signal), 0);
  assert.equal(abortListenerCount(b.signal), 1);
  a.abort();
  assert.equal(told, 0);
  b.abort();
  assert.equal(told, 1);
});
