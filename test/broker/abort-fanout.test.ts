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

test("onAbort: the shared listener leaves the signal with the last subscription", () => {
  const ac = new AbortController();
  const offs = [onAbort(ac.signal, () => {}), onAbort(ac.signal, () => {})];
  assert.equal(getEventListeners(ac.signal, "abort").length, 1);
  for (const off of offs) off();
  assert.equal(getEventListeners(ac.signal, "abort").length, 0);
  let called = 0;
  onAbort(ac.signal, () => called++);
  ac.abort();
  assert.equal(called, 1);
});
