/**
 * A request field that becomes a timer must not pass setTimeout's ceiling: Node fires a longer
 * delay after 1 ms (with a TimeoutOverflowWarning), so a fetch stream with maxWaitMs 2^31 spun its
 * keep-alive every millisecond. Every such field is refused with INVALID_REQUEST instead.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveBrokerConfig } from "../../src/broker/broker-config.js";
import { MAX_TIMER_MS } from "../../src/format/duration.js";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { resolveLimits } from "../../src/server/server-options.js";
import { batchOf, collectWarnings, startServer } from "../server/helpers.js";

const TOO_LONG = MAX_TIMER_MS + 1;

function refusedWith(frame: Buffer, field: string): void {
  const err = p.responseError(frame);
  assert.equal(err?.code, ErrorCode.INVALID_REQUEST, `expected INVALID_REQUEST, got ${err?.message}`);
  assert.match(err.message, new RegExp(field));
}

test("durations past the timer ceiling are refused with INVALID_REQUEST, and no timer overflows", {
  timeout: 20_000,
}, async (t) => {
  const warnings = collectWarnings(t);
  const { broker, client } = await startServer(t);
  await broker.createTopic("ceiling", 1);
  const c = await client();

  for (const maxWaitMs of [TOO_LONG, 0xffff_ffff]) {
    const stream = await c.call((id) =>
      p.encodeFetchStreamRequest(id, {
        topic: "ceiling",
        partition: 0,
        offset: 0,
        maxBytes: 1024,
        maxWaitMs,
        minBytes: 1,
        windowBytes: 1,
        group: "",
        memberId: "",
        generation: 0,
      }),
    );
    refusedWith(stream, "maxWaitMs");
    const fetch = await c.call((id) =>
      p.encodeFetchRequest(id, {
        topic: "ceiling",
        partition: 0,
        offset: 0,
        maxBytes: 1024,
        maxWaitMs,
        minBytes: 1,
      }),
    );
    refusedWith(fetch, "maxWaitMs");
  }
  for (const field of ["sessionTimeoutMs", "rebalanceTimeoutMs"] as const) {
    const join = await c.call((id) =>
      p.encodeJoinGroupRequest(id, {
        group: "g",
        memberId: "",
        clientId: "t",
        topics: ["ceiling"],
        strategy: "range",
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        [field]: 0xffff_ffff,
      }),
    );
    refusedWith(join, field);
  }
  // The longest a timer may wait is still accepted (answered at once: there is a record).
  await c.call((id) =>
    p.encodeProduceRequest(id, {
      topic: "ceiling",
      partition: 0,
      acks: 1,
      timeoutMs: 0,
      records: batchOf(["x"]),
    }),
  );
  const ok = await c.call((id) =>
    p.encodeFetchRequest(id, {
      topic: "ceiling",
      partition: 0,
      offset: 0,
      maxBytes: 1024,
      maxWaitMs: MAX_TIMER_MS,
      minBytes: 0,
    }),
  );
  assert.equal(p.responseError(ok), null);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(warnings, []);
});

test("duration settings past the timer ceiling are refused", () => {
  const cfg = resolveBrokerConfig({});
  for (const key of ["handshakeTimeoutMs", "shutdownTimeoutMs"] as const) {
    assert.throws(() => resolveLimits(cfg, { [key]: TOO_LONG }), new RegExp(key));
  }
  for (const key of ["flushIntervalMs", "compactionDelayMs"] as const) {
    assert.throws(() => resolveBrokerConfig({ [key]: TOO_LONG }), new RegExp(key));
  }
});
