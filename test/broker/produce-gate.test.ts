import assert from "node:assert/strict";
import { test } from "node:test";
import { type HeldProduce, ProduceGate } from "../../src/broker/produce-gate.js";

/** A promise and the functions that settle it. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: Error) => void } {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** An item that records its run or failure in `log` under `name`. */
function item(log: string[], name: string, ready: Promise<unknown> | null, run?: () => void): HeldProduce {
  return {
    ready,
    run: () => {
      log.push(`run ${name}`);
      run?.();
    },
    fail: (err) => log.push(`fail ${name}: ${(err as Error).message}`),
  };
}

test("held produces run in the order they came, each once it is ready and all before it ran", async () => {
  const log: string[] = [];
  let drained = 0;
  const gate = new ProduceGate(() => drained++);
  const a = deferred();
  const c = deferred();
  gate.hold(item(log, "a", a.promise));
  assert.equal(gate.holding, true);
  gate.hold(item(log, "b", null));
  gate.hold(item(log, "c", c.promise));
  gate.hold(item(log, "d", null));
  // The third is ready before the first: it still waits its turn.
  c.resolve();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(log, []);
  a.resolve();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(log, ["run a", "run b", "run c", "run d"]);
  assert.equal(gate.holding, false);
  assert.equal(drained, 1);
});

test("an item whose wait fails is failed alone; the rest run", async () => {
  const log: string[] = [];
  const gate = new ProduceGate(() => log.push("drained"));
  const a = deferred();
  gate.hold(item(log, "a", a.promise));
  gate.hold(item(log, "b", Promise.resolve()));
  a.reject(new Error("did not open"));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(log, ["fail a: did not open", "run b", "drained"]);
});

test("an item that throws is failed; the rest run", async () => {
  const log: string[] = [];
  const gate = new ProduceGate(() => log.push("drained"));
  const a = deferred();
  gate.hold(item(log, "a", a.promise));
  gate.hold({
    ready: null,
    run: () => {
      throw new Error("broken");
    },
    fail: (err) => log.push(`fail b: ${(err as Error).message}`),
  });
  gate.hold(item(log, "c", null));
  a.resolve();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(log, ["run a", "fail b: broken", "run c", "drained"]);
});

test("while an item runs nothing is held (what it produces goes straight through); an item held then runs after", async () => {
  const log: string[] = [];
  const gate = new ProduceGate(() => log.push("drained"));
  const seen: boolean[] = [];
  gate.hold(
    item(log, "a", Promise.resolve(), () => {
      seen.push(gate.holding);
      gate.hold(item(log, "inner", null));
    }),
  );
  gate.hold(item(log, "b", null));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, [false]);
  assert.deepEqual(log, ["run a", "run b", "run inner", "drained"]);
});

test("an item held when nothing else is, and ready, runs at once", () => {
  const log: string[] = [];
  const gate = new ProduceGate(() => log.push("drained"));
  gate.hold(item(log, "a", null));
  assert.deepEqual(log, ["run a", "drained"]);
  assert.equal(gate.holding, false);
});

test("a long queue drops the items it ran and keeps the order of the rest", async () => {
  const order: number[] = [];
  const gate = new ProduceGate(() => order.push(-1));
  const first = deferred();
  const second = deferred();
  gate.hold({ ready: first.promise, run: () => order.push(0), fail: () => {} });
  for (let i = 1; i <= 1500; i++) gate.hold({ ready: null, run: () => order.push(i), fail: () => {} });
  gate.hold({ ready: second.promise, run: () => order.push(1501), fail: () => {} });
  first.resolve();
  await new Promise((r) => setImmediate(r));
  assert.equal(order.length, 1501);
  // 1,501 ran and one waits: the next hold drops the ran ones from the queue.
  gate.hold({ ready: null, run: () => order.push(1502), fail: () => {} });
  assert.equal(gate.holding, true);
  second.resolve();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [...Array.from({ length: 1503 }, (_, i) => i), -1]);
});
