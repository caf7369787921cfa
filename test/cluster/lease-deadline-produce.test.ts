/**
 * A leader whose lease deadline has passed acknowledges nothing, even before its deadline timer has
 * fired: a process woken from a pause handles the produce requests that wait on its sockets before
 * its timers run. Here the pause is the event loop held busy past the deadline, then a produce in
 * the same turn: it must be refused (NOT_LEADER) rather than stored and acknowledged.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { Broker } from "../../src/broker/broker.js";
import { type ClusterMode, startClusterMode } from "../../src/cluster/cluster-mode.js";
import { ErrorCode } from "../../src/format/errors.js";
import { batchOf, conchError } from "../server/helpers.js";
import { EtcdCluster, skipWithoutEtcd } from "./etcd-harness.js";
import { until } from "./replica-cluster.js";

const TTL_SECONDS = 2;

describe("the lease deadline on the produce path", { skip: skipWithoutEtcd }, () => {
  let etcd: EtcdCluster;
  let dir: string;
  let broker: Broker;
  let cluster: ClusterMode;
  before(async () => {
    etcd = await EtcdCluster.start(1);
    dir = await mkdtemp(join(tmpdir(), "conch-lease-deadline-"));
    broker = await Broker.open({
      dataDir: dir,
      brokerId: 1,
      etcd: etcd.endpoints.join(","),
      clusterId: "deadline",
      leaseTtlSeconds: TTL_SECONDS,
    });
    cluster = await startClusterMode({
      broker,
      logger: pino({ enabled: false }),
      host: "127.0.0.1",
      port: 1,
      kafkaHost: "",
      kafkaPort: 0,
    });
  });
  after(async () => {
    await cluster?.close();
    await broker?.close();
    await rm(dir, { recursive: true, force: true });
    await etcd?.stop();
  });

  test("a leader past its lease deadline refuses a produce before its deadline timer fires", async () => {
    await broker.createTopic("t", 1, { "replication.factor": "1" });
    await until(() => leads(broker, "t", 0), "leading t/0");
    // Leading now: a produce is acknowledged.
    await broker.produce("t", 0, batchOf(["before"]), "leader");
    // A renewal answered from here on moves the deadline at most to now + TTL.
    const pausedUntil = performance.now() + TTL_SECONDS * 1000 + 300;
    while (performance.now() < pausedUntil) {
      // Busy: no timer, no socket is served, as in a stopped process.
    }
    assert.equal(cluster.node.fenced, false, "the deadline timer has not run yet");
    await assert.rejects(
      broker.produce("t", 0, batchOf(["after the deadline"]), "leader"),
      conchError(ErrorCode.NOT_LEADER),
    );
  });
});

function leads(broker: Broker, topic: string, partition: number): boolean {
  try {
    broker.replication?.checkLeader(topic, partition);
    return broker.replication !== null;
  } catch {
    return false;
  }
}
