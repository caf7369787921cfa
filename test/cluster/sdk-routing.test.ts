import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient } from "../../src/client/conch.js";
import * as p from "../../src/protocol/index.js";
import { checkRouting } from "../client/leader-routing-check.js";
import { TestClient } from "../server/helpers.js";
import { BrokerProcess } from "./broker-process.js";
import { EtcdCluster, skipWithoutEtcd } from "./etcd-harness.js";

/**
 * test/client/leader-routing.test.ts checks the same routing against in-process brokers. A produce
 * right after the topic's creation can reach a leader before it hosts the partition (it learns of
 * the topic from etcd a moment after the broker that took the create): UNKNOWN_TOPIC, which the SDK
 * retries while the cluster's metadata names the partition.
 */
describe("the SDK in a 3-broker cluster, from one bootstrap address", { skip: skipWithoutEtcd }, () => {
  let etcd: EtcdCluster;
  const brokers: BrokerProcess[] = [];
  before(async () => {
    etcd = await EtcdCluster.start(1);
    for (let id = 1; id <= 3; id++)
      brokers.push(await BrokerProcess.start({ brokerId: id, etcd: etcd.endpoints, clusterId: "route" }));
  });
  after(async () => {
    await Promise.all(brokers.map((b) => b.remove()));
    await etcd?.stop();
  });

  test("produces to and consumes from partitions led by every broker, each stored on its leader", async () => {
    const bootstrap = brokers[0];
    assert.ok(bootstrap);
    const conch = createClient({ brokers: [`127.0.0.1:${bootstrap.port}`] });
    try {
      // Replication factor 1: each partition lives on its leader alone, so only routing reaches it.
      await conch.admin().createTopic("spread", { partitions: 6, configs: { "replication.factor": "1" } });
      const c = await TestClient.connect(bootstrap.port);
      await c.handshake();
      const m = p.decodeMetadataResponse(await c.call((id) => p.encodeMetadataRequest(id, ["spread"])));
      c.destroy();
      const leaders = m.topics[0]?.partitions.map((x) => x.leaderId) ?? [];
      assert.deepEqual(new Set(leaders), new Set([1, 2, 3]), "leaders differ by partition");
      await checkRouting(conch, "spread", leaders, brokers, 20);
    } finally {
      await conch.close();
    }
  });
});
