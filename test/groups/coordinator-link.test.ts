/**
 * The SDK's way to a group's coordinator: it follows FindCoordinator's answer, uses the bootstrap
 * connection when the broker answers "me" (a single node), and gives up a coordinator it cannot
 * reach at once with NOT_COORDINATOR, so that the member finds the new one instead of waiting out a
 * request timeout on a dead broker (a SIGKILLed coordinator held a group off for 30 s).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConnectionManager } from "../../src/client/connection-manager.js";
import { CoordinatorLink } from "../../src/client/coordinator-link.js";
import { connectionManagerOptions } from "../../src/client/options.js";
import { ErrorCode } from "../../src/format/errors.js";
import { decodeFetchOffsetsResponse, encodeFetchOffsetsRequest } from "../../src/protocol/fetch-offsets.js";
import { freePort } from "../cluster/etcd-harness.js";
import { conchError, serve } from "./helpers.js";

function link(address: string, group: string): { link: CoordinatorLink; close(): void } {
  const options = connectionManagerOptions({ brokers: [address], requestTimeoutMs: 10_000 });
  const bootstrap = new ConnectionManager(options);
  const l = new CoordinatorLink(bootstrap, options, group);
  return {
    link: l,
    close() {
      l.close();
      bootstrap.close();
    },
  };
}

const fetchOffsets = (l: CoordinatorLink, group: string) =>
  l.request(encodeFetchOffsetsRequest, { group, partitions: [] }, decodeFetchOffsetsResponse);

test("on a single node the bootstrap broker is the coordinator", async (t) => {
  const served = await serve(t);
  await served.broker.createTopic("orders", 1);
  await served.broker.groups.commit("g", "", 0, [{ topic: "orders", partition: 0, offset: 3 }]);
  const c = link(served.address, "g");
  t.after(() => c.close());
  assert.deepEqual((await fetchOffsets(c.link, "g")).offsets, [{ topic: "orders", partition: 0, offset: 3 }]);
});

test("a coordinator that cannot be reached is given up at once with NOT_COORDINATOR, not after the request timeout", async (t) => {
  const served = await serve(t);
  const dead = await freePort();
  let asked = 0;
  // The cluster names a broker nobody listens on (one just SIGKILLed).
  served.broker.groups.coordinateLedPartitions({
    coordinator: async () => {
      asked++;
      return { id: 3, host: "127.0.0.1", port: dead, kafkaHost: "127.0.0.1", kafkaPort: 0 };
    },
  });
  const c = link(served.address, "g");
  t.after(() => c.close());
  const started = performance.now();
  await assert.rejects(fetchOffsets(c.link, "g"), conchError(ErrorCode.NOT_COORDINATOR));
  const ms = performance.now() - started;
  assert.ok(ms < 5_000, `gave up after ${Math.round(ms)} ms (the request timeout is 10000 ms)`);
  // The next request looks the coordinator up again.
  await assert.rejects(fetchOffsets(c.link, "g"), conchError(ErrorCode.NOT_COORDINATOR));
  assert.equal(asked, 2);
});
