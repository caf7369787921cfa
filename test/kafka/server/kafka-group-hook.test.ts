/**
 * The place the consumer-group handlers plug in: a map of bare handler functions given to
 * defaultKafkaHandlers. They are advertised once given, dispatched in order with the rest, and
 * handed a frame of their own, since they may keep views of it while they wait.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Broker } from "../../../src/broker/broker.js";
import { ApiKey } from "../../../src/kafka/protocol/api-keys.js";
import { encodeResponse } from "../../../src/kafka/protocol/frame.js";
import { defaultKafkaHandlers, type KafkaHandleFunction } from "../../../src/kafka/server/handler-table.js";
import { KafkaFrontEnd } from "../../../src/kafka/server/kafka-front-end.js";
import { ConchServer } from "../../../src/server/conch-server.js";
import { until } from "../../server/helpers.js";
import { kafkaRequest, RawKafkaClient, responseBody } from "./kafka-harness.js";

test("kafka group hook: group handlers given as functions are advertised, ordered, and keep their frame", async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-kafka-hook-"));
  const broker = await Broker.open({ dataDir, flush: "none" });
  const server = new ConchServer(broker);
  // A stand-in JoinGroup that reads its body only once a later request has been read (in a later
  // socket read, over the shared read buffer), as a real join reads its metadata after waiting.
  let laterRead: () => void = () => {};
  const later = new Promise<void>((resolve) => {
    laterRead = resolve;
  });
  const joinGroup: KafkaHandleFunction = async (_ctx, h) => {
    await later;
    const member = h.body.string();
    return encodeResponse(
      ApiKey.JOIN_GROUP,
      h.apiVersion,
      h.correlationId,
      (w, _v, s: string) => w.string(s),
      member,
    );
  };
  const handlers = defaultKafkaHandlers(new Map([[ApiKey.JOIN_GROUP, joinGroup]]));
  const metadata = handlers.get(ApiKey.METADATA)!;
  handlers.set(ApiKey.METADATA, {
    ...metadata,
    handle: (ctx, h) => {
      laterRead();
      return metadata.handle(ctx, h);
    },
  });
  const kafka = new KafkaFrontEnd(server, broker, { handlers });
  const { port } = await kafka.listen(0, "127.0.0.1");
  const c = await RawKafkaClient.connect(port);
  t.after(async () => {
    c.destroy();
    await server.close();
    await broker.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  c.send(kafkaRequest(18, 0, 1, () => {}));
  const versions = responseBody(await c.next()).body;
  versions.int16();
  const keys: number[] = [];
  for (let n = versions.arrayCount(6); n > 0; n--) {
    keys.push(versions.int16());
    versions.int16();
    versions.int16();
  }
  assert.ok(keys.includes(ApiKey.JOIN_GROUP));

  // The join, then, once it waits, frames in a later read, which reuses the shared read buffer.
  c.send(kafkaRequest(11, 2, 2, (w) => w.string("member-one")));
  await until(() => kafka.listener.connections().some((conn) => conn.inflight === 1), "the join waiting");
  c.send(
    kafkaRequest(3, 1, 3, (w) => w.arrayCount(0)),
    kafkaRequest(18, 0, 4, () => {}),
    kafkaRequest(18, 0, 5, () => {}),
  );
  const joined = responseBody(await c.next());
  assert.equal(joined.correlationId, 2);
  assert.equal(joined.body.string(), "member-one");
  assert.equal(responseBody(await c.next()).correlationId, 3);
  assert.equal(responseBody(await c.next()).correlationId, 4);
  assert.equal(responseBody(await c.next()).correlationId, 5);
});
