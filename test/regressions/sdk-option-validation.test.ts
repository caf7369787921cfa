import assert from "node:assert/strict";
import { test } from "node:test";
import { Consumer } from "../../src/client/consumer.js";
import type { ClientOptions } from "../../src/client/options.js";
import { Producer } from "../../src/client/producer.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";

const brokers = ["127.0.0.1:1"];
const TIMER_CEILING = 2 ** 31 - 1;
/** Values no duration may take: past Node's timer ceiling, negative, fractional, not a number. */
const BAD_DURATIONS: unknown[] = [2 ** 31, 3e9, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "100"];

function invalidConfig(option: string) {
  return (err: unknown) => {
    assert.ok(err instanceof ConchError, `${String(err)} is not a ConchError`);
    assert.equal(err.codeName, "INVALID_CONFIG");
    assert.match(err.message, new RegExp(`^${option} `));
    return true;
  };
}

const clientDurations = [
  "connectTimeoutMs",
  "requestTimeoutMs",
  "reconnectBackoffMs",
  "reconnectBackoffMaxMs",
];
const producerDurations = ["lingerMs", "retryBackoffMs", "retryBackoffMaxMs", "deliveryTimeoutMs"];
const consumerDurations = ["maxWaitMs", "retryBackoffMs", "retryBackoffMaxMs"];

test("every client, producer and consumer duration past 2^31-1 ms, negative or not an integer is INVALID_CONFIG at construction", () => {
  for (const bad of BAD_DURATIONS) {
    for (const option of clientDurations) {
      const client = { brokers, [option]: bad } as unknown as ClientOptions;
      assert.throws(() => new Producer(client), invalidConfig(option), `${option}: ${String(bad)}`);
      assert.throws(() => new Consumer(client), invalidConfig(option), `${option}: ${String(bad)}`);
    }
    for (const option of producerDurations) {
      assert.throws(
        () => new Producer({ brokers }, { [option]: bad }),
        invalidConfig(option),
        `${option}: ${String(bad)}`,
      );
    }
    for (const option of consumerDurations) {
      assert.throws(
        () => new Consumer({ brokers }, { [option]: bad }),
        invalidConfig(option),
        `${option}: ${String(bad)}`,
      );
    }
  }
  // The ceiling itself is a valid timer.
  for (const option of clientDurations) new Producer({ brokers, [option]: TIMER_CEILING });
  for (const option of ["retryBackoffMs", "retryBackoffMaxMs", "deliveryTimeoutMs"])
    new Producer({ brokers }, { [option]: TIMER_CEILING });
  new Consumer({ brokers }, { maxWaitMs: TIMER_CEILING });
});

test("producer sizes and counts out of range are INVALID_CONFIG naming the option", () => {
  const cases: Array<[string, unknown]> = [
    ["batchBytes", 10],
    ["batchBytes", 4096.5],
    ["bufferBytes", -1],
    ["maxInFlight", 0],
    ["retries", -1],
    ["retries", 0.5],
    ["acks", "most"],
  ];
  for (const [option, bad] of cases) {
    assert.throws(
      () => new Producer({ brokers }, { [option]: bad }),
      invalidConfig(option),
      `${option}: ${String(bad)}`,
    );
  }
  assert.equal(ErrorCode.INVALID_CONFIG, 11);
});
