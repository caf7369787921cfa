import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { test } from "node:test";
import { abortListenerCount, onAbort } from "../../src/broker/abort-fanout.js";

test("onAbort: many subscriptions share one listener, unsubscribing removes them, abort calls the rest once", () => {
  const ac = new AbortController();
  const calls: number[] = [];
  const offs: (() => void)[] = [];
  for (let i = 0; i < 10_000; i++) offs.push(onAbort(ac.signal, () => calls.push(i)));
  assert.equal(abortListenerCount(ac.signal), 10_000);
  for (let i = 0; i < 10_000; i += 2) offs[i]?.();
  assert.equal(abortListenerCount(ac.signal), 5_000);
  ac.abort();
  ac.abort();
  assert.equal(calls.length, 5_000);
  assert.ok(calls.every((i) => i % 2 === 1));
  assert.equal(abortListenerCount(ac.signal), 0);
});

test("onAbort: one shared listener per signal, kept across subscriptions until the signal aborts", () => {
  const ac = new AbortController();
  const offs = [onAbort(ac.signal, () => {}), onAbort(ac.signal, () => {})];
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  for (const off of offs) off();
  assert.equal(abortListenerCount(ac.signal), 0);
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  let called = 0;
  let unsubscribedCalled = 0;
  onAbort(ac.signal, () => called++);
  onAbort(ac.signal, () => unsubscribedCalled++)();
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  ac.abort();
  assert.equal(called, 1);
  assert.equal(unsubscribedCalled, 0);
  assert.equal(getEventListeners(ac.signal, "abort").length, 0);
});
