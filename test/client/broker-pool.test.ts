import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BrokerPool, type MetadataSource } from "../../src/client/broker-pool.js";
import { ConnectionManager } from "../../src/client/connection-manager.js";
import { connectionManagerOptions } from "../../src/client/options.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";
import type { MetadataResponse } from "../../src/protocol/metadata.js";
import { RealBroker } from "./real-broker.js";

// Nothing here connects: the pool's Metadata requests go to `ask`, and the managers are only named.
const options = connectionManagerOptions({ brokers: ["127.0.0.1:1"] });

function cluster(brokerIds: number[], leaders: number[]): MetadataResponse {
  return {
    brokerId: brokerIds[0] ?? 1,
    controllerId: brokerIds[0] ?? 1,
    brokers: brokerIds.map((id) => ({ id, host: "127.0.0.1", port: 9000 + id })),
    topics: [
      {
        name: "t",
        errorCode: 0,
        partitions: leaders.map((leaderId, partition) => ({
          partition,
          leaderId,
          leaderEpoch: 0,
          replicas: [leaderId],
          isr: [leaderId],
        })),
      },
    ],
  };
}

const SINGLE: MetadataResponse = {
  brokerId: 0,
  controllerId: -1,
  brokers: [{ id: 0, host: "", port: 0 }],
  topics: [],
};

/** A MetadataSource that answers `next()` and records when it was asked. */
function recordingSource(next: () => MetadataResponse): {
  ask: MetadataSource;
  at: number[];
  asked: () => Promise<void>;
} {
  const at: number[] = [];
  let wake: (() => void) | null = null;
  return {
    at,
    ask: () => {
      at.push(performance.now());
      wake?.();
      wake = null;
      return Promise.resolve(next());
    },
    asked: () => new Promise<void>((resolve) => (wake = resolve)),
  };
}

const notLeader = new ConchError(ErrorCode.NOT_LEADER, "not the leader");
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("BrokerPool", () => {
  test("leader errors in a burst ask for metadata at most once per minRefreshIntervalMs", async () => {
    const src = recordingSource(() => cluster([1, 2], [1, 2]));
    const pool = new BrokerPool(new ConnectionManager(options), options, {
      ask: src.ask,
      minRefreshIntervalMs: 200,
    });
    try {
      // Taken before the pool's own clock reading for its first refresh: a stall (GC, a busy
      // machine) between that reading and the recorded ask must not make a correct bound look short.
      const start = performance.now();
      pool.leaderFor("t", 0);
      assert.equal(src.at.length, 1, "the first lookup of a topic asks for its leaders");
      const second = src.asked();
      for (let i = 0; i < 1000; i++) pool.leaderFailed(notLeader);
      await settled();
      assert.equal(src.at.length, 1, "a burst while one request is under way waits for the bound");
      await second;
      assert.equal(src.at.length, 2);
      assert.ok(src.at[1]! - start >= 199.999, `asked again after ${src.at[1]! - start} ms`);
      for (let i = 0; i < 1000; i++) pool.leaderFailed(notLeader);
      await settled();
      assert.equal(src.at.length, 2, "errors right after a refresh wait for the bound too");
      assert.equal(pool.refreshes, 2);
    } finally {
      pool.close();
    }
  });

  test("routes each partition to its leader's connection and drops brokers no longer listed", async () => {
    let answer = cluster([1, 2], [1, 2]);
    const src = recordingSource(() => answer);
    const bootstrap = new ConnectionManager(options);
    const pool = new BrokerPool(bootstrap, options, { ask: src.ask, minRefreshIntervalMs: 1 });
    try {
      assert.equal(pool.leaderFor("t", 0), bootstrap, "unknown leaders: the bootstrap broker");
      await settled();
      const one = pool.leaderFor("t", 0);
      const two = pool.leaderFor("t", 1);
      assert.equal(one.describe(), "127.0.0.1:9001");
      assert.equal(two.describe(), "127.0.0.1:9002");
      assert.equal(pool.leaderFor("t", 7), bootstrap, "a partition Metadata did not name");

      // Broker 1 died: its partition moved to broker 2, and broker 1 is no longer listed.
      answer = cluster([2], [2, 2]);
      const waiting = one.connection().then(
        () => null,
        (e: ConchError) => e,
      );
      const asked = src.asked();
      pool.leaderFailed(new ConchError(ErrorCode.CONNECTION_CLOSED, "connection closed: refused"));
      await asked;
      await settled();
      assert.equal(pool.leaderFor("t", 0), two);
      assert.ok(one.closed, "the dead broker's connection is closed");
      const e = await waiting;
      assert.ok(e !== null);
      assert.ok(e.retriable && /broker 1 left the cluster/.test(e.message), String(e));
    } finally {
      pool.close();
    }
    assert.ok(bootstrap.closed);
  });

  test("after a failed Metadata request the next goes to a connected broker, not to a dead one still being dialled", async (t) => {
    // Broker 2 is real and connected; broker 1 (port 9001) is dead: a request there would wait out
    // the request timeout while its manager dials, and every refresh with it.
    const live = await RealBroker.start(t);
    const answer = cluster([1, 2], [1, 2]);
    const brokers = answer.brokers.map((b) => (b.id === 2 ? { ...b, port: live.port } : b));
    Object.assign(answer, { brokers });
    const asked: ConnectionManager[] = [];
    let fail = false;
    const bootstrap = new ConnectionManager(options);
    const pool = new BrokerPool(bootstrap, options, {
      minRefreshIntervalMs: 1,
      ask: (manager) => {
        asked.push(manager);
        return fail
          ? Promise.reject(new ConchError(ErrorCode.CONNECTION_CLOSED, "connection closed: reset"))
          : Promise.resolve(answer);
      },
    });
    try {
      await pool.whenKnown("t");
      const leaderOfOne = pool.leaderFor("t", 1);
      await leaderOfOne.connection();
      // A Metadata request fails (its broker's connection dropped): the next goes elsewhere.
      fail = true;
      await pool.whenKnown("x");
      fail = false;
      await pool.whenKnown("y");
      const last = asked.at(-1);
      assert.equal(last, leaderOfOne, `asked ${last?.describe()}`);
    } finally {
      pool.close();
    }
  });

  test("a single-node broker is asked once, then everything goes to the bootstrap connection", async () => {
    const src = recordingSource(() => SINGLE);
    const bootstrap = new ConnectionManager(options);
    const pool = new BrokerPool(bootstrap, options, { ask: src.ask, minRefreshIntervalMs: 1 });
    try {
      assert.equal(pool.leaderFor("t", 0), bootstrap);
      await settled();
      assert.ok(pool.singleNode);
      for (let i = 0; i < 100; i++) {
        assert.equal(pool.leaderFor(`topic-${i}`, i), bootstrap);
        pool.leaderFailed(new ConchError(ErrorCode.CONNECTION_CLOSED, "connection closed: restart"));
      }
      await settled();
      assert.equal(src.at.length, 1);
    } finally {
      pool.close();
    }
  });
});
