/**
 * Listing and describing from any broker of a cluster: a topic whose partitions all live on other
 * brokers (replication factor 1 on a 3-broker cluster) is listed and described, with each
 * partition's leader, replicas, ISR and its leader's offsets, by the broker that holds none of
 * them, natively (ListTopics, DescribeTopic 2 and 3, `conch topic describe`) and over HTTP; every
 * broker's HTTP API lists a group whichever broker coordinates it. A
 * leader that does not answer (SIGSTOP) leaves its partitions' figures "not known" within the
 * time bound instead of holding the answer.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createClient } from "../../src/client/conch.js";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { runConch } from "../cli/cli-harness.js";
import { TestClient } from "../server/helpers.js";
import { BrokerProcess } from "./broker-process.js";
import { metadataFrom } from "./cluster-metadata.js";
import { EtcdCluster, skipWithoutEtcd } from "./etcd-harness.js";

const TOPIC = "elsewhere";

describe("listing and describing from a broker that hosts none of the topic", {
  skip: skipWithoutEtcd,
  timeout: 120_000,
}, () => {
  let etcd: EtcdCluster;
  const brokers: BrokerProcess[] = [];
  before(async () => {
    etcd = await EtcdCluster.start(1);
    for (let id = 1; id <= 3; id++)
      brokers.push(
        await BrokerProcess.start({ brokerId: id, etcd: etcd.endpoints, clusterId: "listing", http: true }),
      );
  });
  after(async () => {
    for (const b of brokers) b.resume();
    await Promise.all(brokers.map((b) => b.remove()));
    await etcd?.stop();
  });

  test("the cluster's topic, its leaders and their offsets, from any broker; unknown when a leader is silent", async () => {
    const first = brokers[0];
    assert.ok(first);
    const conch = createClient({ brokers: [`127.0.0.1:${first.port}`] });
    // Two partitions of one replica each: two brokers lead one each, the third holds nothing.
    await conch.admin().createTopic(TOPIC, { partitions: 2, configs: { "replication.factor": "1" } });
    const m = (await metadataFrom(first.port, [TOPIC])).topics[0];
    assert.ok(m);
    const leaders = m.partitions.map((x) => x.leaderId);
    const outsider = brokers.find((b) => !leaders.includes(b.brokerId));
    assert.ok(outsider, `a broker leads neither partition (leaders ${leaders.join(",")})`);
    const producer = conch.producer({ acks: "all" });
    for (let i = 0; i < 5; i++) await producer.send(TOPIC, { partition: 0, value: `a${i}` });
    for (let i = 0; i < 3; i++) await producer.send(TOPIC, { partition: 1, value: `b${i}` });
    await producer.close();
    await conch.close();

    const c = await TestClient.connect(outsider.port);
    try {
      await c.handshake();
      const listed = p.decodeListTopicsResponse(await c.call((id) => p.encodeListTopicsRequest(id)));
      assert.ok(listed.topics.includes(TOPIC), `listed: ${listed.topics.join(",")}`);

      const v3 = p.decodeDescribeTopicResponseV3(
        await c.call((id) => p.encodeDescribeTopicRequestV3(id, { topic: TOPIC })),
      );
      assert.deepEqual(
        v3.partitions.map((x) => [
          x.partition,
          x.leaderId,
          x.replicas,
          x.isr,
          x.figuresKnown,
          x.logStartOffset,
          x.highWatermark,
        ]),
        m.partitions.map((x, i) => [x.partition, x.leaderId, x.replicas, x.isr, true, 0, i === 0 ? 5 : 3]),
      );
      assert.equal(v3.configs["replication.factor"], undefined);
      assert.equal(v3.configs["cleanup.policy"], "delete");

      // Version 2 (older clients) describes the cluster's topic too.
      const v2 = p.decodeDescribeTopicResponseV2(
        await c.call((id) => p.encodeDescribeTopicRequestV2(id, { topic: TOPIC })),
      );
      assert.deepEqual(
        v2.partitions.map((x) => x.highWatermark),
        [5, 3],
      );
    } finally {
      c.destroy();
    }

    const cli = await runConch([
      "topic",
      "describe",
      TOPIC,
      "--broker",
      `127.0.0.1:${outsider.port}`,
      "--json",
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    const json = JSON.parse(cli.stdout) as { partitions: { latest: number; leader: number }[] };
    assert.deepEqual(
      json.partitions.map((x) => [x.latest, x.leader]),
      [
        [5, leaders[0]],
        [3, leaders[1]],
      ],
    );

    const http = await fetch(`http://127.0.0.1:${outsider.httpPort}/api/v1/topics`);
    const listedHttp = (await http.json()) as { topics: { name: string; messages: number | null }[] };
    assert.equal(listedHttp.topics.find((t) => t.name === TOPIC)?.messages, 8);
    const detail = (await (
      await fetch(`http://127.0.0.1:${outsider.httpPort}/api/v1/topics/${TOPIC}`)
    ).json()) as { partitions: { leader: number; replicas: number[]; highWatermark: number | null }[] };
    assert.deepEqual(
      detail.partitions.map((x) => [x.leader, x.replicas, x.highWatermark]),
      m.partitions.map((x, i) => [x.leaderId, x.replicas, i === 0 ? 5 : 3]),
    );

    // Groups over HTTP: every broker lists a group, whichever coordinates it.
    const member = createClient({ brokers: [`127.0.0.1:${first.port}`] });
    const consumer = member.consumer({ group: "listed", topics: [TOPIC], sessionTimeoutMs: 6_000 });
    const reading = (async () => {
      for await (const _ of consumer) break;
    })().catch(() => {});
    try {
      for (const b of brokers) {
        const res = await groupsUntil(b.httpPort, (g) =>
          g.some((x) => x.group === "listed" && x.members === 1),
        );
        assert.deepEqual(
          res.groups.filter((g) => g.group === "listed").map((g) => g.members),
          [1],
          `broker ${b.brokerId}`,
        );
        assert.deepEqual(res.brokersNotAnswering, []);
      }
    } finally {
      await consumer.close();
      await reading;
      await member.close();
    }

    // A silent leader: its partition's figures are not known, and the answer comes within the bound.
    const silent = brokers.find((b) => b.brokerId === leaders[0]);
    assert.ok(silent);
    silent.pause();
    try {
      const d = await TestClient.connect(outsider.port);
      try {
        await d.handshake();
        const started = performance.now();
        const res = p.decodeDescribeTopicResponseV3(
          await d.call((id) => p.encodeDescribeTopicRequestV3(id, { topic: TOPIC })),
        );
        const tookMs = performance.now() - started;
        assert.ok(tookMs < 4_000, `answered in ${Math.round(tookMs)} ms`);
        assert.equal(res.partitions[0]?.figuresKnown, false);
        assert.equal(res.partitions[0]?.highWatermark, p.UNKNOWN_OFFSET);
        assert.equal(res.partitions[1]?.figuresKnown, true);
        assert.equal(res.partitions[1]?.highWatermark, 3);
        // Version 2 cannot say "not known": it answers an error, not a made-up offset.
        await assert.rejects(
          d
            .call((id) => p.encodeDescribeTopicRequestV2(id, { topic: TOPIC }))
            .then(p.decodeDescribeTopicResponseV2),
          (err: { code: number }) => err.code === ErrorCode.TIMEOUT,
        );
      } finally {
        d.destroy();
      }
    } finally {
      silent.resume();
    }
  });
});

interface GroupList {
  groups: { group: string; members: number }[];
  brokersNotAnswering: number[];
}

/** A group's join has no event a test can await from another broker: ask until it holds (30 s at most). */
async function groupsUntil(
  httpPort: number,
  ok: (groups: GroupList["groups"]) => boolean,
): Promise<GroupList> {
  const until = performance.now() + 30_000;
  for (;;) {
    const res = (await (await fetch(`http://127.0.0.1:${httpPort}/api/v1/groups`)).json()) as GroupList;
    if (ok(res.groups) || performance.now() > until) return res;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
