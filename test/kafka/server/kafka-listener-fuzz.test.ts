/**
 * Malformed frames thrown at a live Kafka listener (fast-check, bounded): random bodies for every
 * served API and version, and real clients' golden requests with bytes overwritten, cut out or
 * counts forged. Whatever each frame does to its own connection (an answer, an error in the
 * answer, the connection closed), the broker stays up, answers in order what it answers, and
 * serves a good client afterwards.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { pino } from "pino";
import { SUPPORTED_APIS } from "../../../src/kafka/protocol/api-keys.js";
import { parseKafkaFixtures } from "../fixtures/fixture-format.js";
import { FIXTURE_MODULES } from "../fixtures/index.js";
import { kafkaRequest, metadataRequest, RawKafkaClient, responseBody, startKafka } from "./kafka-harness.js";

const golden: Buffer[] = [];
for (const mod of FIXTURE_MODULES.values()) {
  for (const [name, frame] of parseKafkaFixtures(mod.TEXT)) if (name.endsWith("-request")) golden.push(frame);
}

/** A frame around `body` for an API and version (header v1, client id "test"). */
function frameOf(apiKey: number, version: number, body: Uint8Array): Buffer {
  return sized(Buffer.concat([kafkaRequest(apiKey, version, 1, () => {}), body]));
}

/** `frame` with its size field made to agree with its length again. */
function sized(frame: Buffer): Buffer {
  const out = Buffer.from(frame);
  if (out.length >= 4) out.writeInt32BE(out.length - 4, 0);
  return out;
}

const randomBody = fc
  .tuple(fc.constantFrom(...SUPPORTED_APIS), fc.nat(8), fc.uint8Array({ maxLength: 200 }))
  .map(([api, v, body]) => frameOf(api.apiKey, api.min + (v % (api.max - api.min + 1)), body));

const mutated = fc
  .tuple(
    fc.constantFrom(...golden),
    fc.nat(),
    fc.integer({ min: 0, max: 255 }),
    fc.constantFrom("set", "cut", "forge"),
  )
  .map(([frame, at, byte, how]) => {
    const i = 4 + (at % Math.max(1, frame.length - 4));
    if (how === "set") {
      const out = Buffer.from(frame);
      out[i] = byte;
      return out;
    }
    if (how === "cut") return sized(Buffer.concat([frame.subarray(0, i), frame.subarray(i + 1)]));
    const out = Buffer.from(frame);
    if (i + 4 <= out.length) out.writeInt32BE(0x7fffffff, i);
    return out;
  });

/** Sends `frame` then a good ApiVersions, ends the connection, and returns the ids answered. */
async function throwAt(port: number, frame: Buffer): Promise<number[]> {
  const c = await RawKafkaClient.connect(port);
  c.send(
    frame,
    kafkaRequest(18, 0, 424242, () => {}),
  );
  // Ending our side wakes any long poll the frame started: the broker answers what it has, then closes.
  c.socket.end();
  const ids: number[] = [];
  for (;;) {
    let frameOut: Buffer;
    try {
      frameOut = await c.next();
    } catch {
      break;
    }
    ids.push(responseBody(frameOut).correlationId);
  }
  return ids;
}

test("kafka listener fuzz: malformed frames never take the broker down; a good client is served after", async (t) => {
  // Few partitions: a forged CreateTopics must not make thousands of partition files.
  const errors: string[] = [];
  const logger = pino({ level: "error" }, { write: (line: string) => errors.push(line) });
  const f = await startKafka(t, { maxPartitions: 40 }, logger);
  await f.broker.createTopic("fuzzed", 1);
  await fc.assert(
    fc.asyncProperty(fc.oneof(randomBody, mutated), async (frame) => {
      const ids = await throwAt(f.port, frame);
      // Whatever was answered came in order: the fuzzed request's answer (id 1, or the golden
      // request's own) before the ApiVersions sent after it.
      const last = ids.indexOf(424242);
      assert.ok(last === -1 || last === ids.length - 1, `answers out of order: ${ids.join(",")}`);
    }),
    { numRuns: 300 },
  );
  const good = await f.client();
  good.send(
    kafkaRequest(18, 2, 1, () => {}),
    metadataRequest(2, 1, ["fuzzed"]),
  );
  assert.equal(responseBody(await good.next()).correlationId, 1);
  assert.equal(responseBody(await good.next()).correlationId, 2);
  // Nothing reached the "failed unexpectedly" path: every bad input was a typed refusal.
  assert.deepEqual(errors, []);
});
