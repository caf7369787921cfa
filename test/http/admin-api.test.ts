import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { test } from "node:test";
import { PROBE_FILE } from "../../src/http/readiness.js";
import { batchOf } from "../broker/helpers.js";
import { call, errorCode, startHttp } from "./helpers.js";

test("healthz answers, readyz checks the data, the listeners and the disk", async (t) => {
  const { base, http } = await startHttp(t);
  assert.deepEqual((await call(base, "GET", "/healthz")).json, { status: "ok" });
  const ready = await call(base, "GET", "/readyz");
  assert.equal(ready.status, 200);
  assert.deepEqual(
    (ready.json.checks as { name: string; ok: boolean }[]).map((c) => [c.name, c.ok]),
    [
      ["data", true],
      ["listener:http", true],
      ["disk", true],
    ],
  );
  http.addListener("conch", { listening: () => false, connections: () => 0 });
  const down = await call(base, "GET", "/readyz");
  assert.equal(down.status, 503);
  http.stopping();
  const stopping = await call(base, "GET", "/readyz");
  assert.equal(stopping.status, 503);
  assert.equal(errorCode((await call(base, "GET", "/api/v1/topics")).json), "SHUTTING_DOWN");
  assert.equal((await call(base, "GET", "/api/v1/topics")).status, 503);
});

test("readyz fails when the data directory cannot be written", async (t) => {
  const { base, dataDir } = await startHttp(t);
  // A directory where the probe writes its file fails the write for every user, root included
  // (a read-only mode would not stop root).
  await mkdir(join(dataDir, PROBE_FILE));
  const r = await call(base, "GET", "/readyz");
  assert.equal(r.status, 503);
  const disk = (r.json.checks as { name: string; ok: boolean; detail?: string }[]).find(
    (c) => c.name === "disk",
  );
  assert.match(disk?.detail ?? "", /EISDIR/);
});

test("topics: create, list, describe, alter, add partitions, delete, with their errors", async (t) => {
  const { base } = await startHttp(t);
  const created = await call(base, "POST", "/api/v1/topics", {
    name: "t1",
    partitions: 2,
    configs: { "retention.ms": "60000" },
  });
  assert.equal(created.status, 201);
  assert.equal((created.json.partitions as unknown[]).length, 2);
  assert.equal((created.json.configs as Record<string, string>)["retention.ms"], "60000");

  const again = await call(base, "POST", "/api/v1/topics", { name: "t1" });
  assert.equal(again.status, 409);
  assert.equal(errorCode(again.json), "TOPIC_ALREADY_EXISTS");
  const badJson = await call(base, "POST", "/api/v1/topics", "{not json");
  assert.equal(badJson.status, 400);
  assert.equal(errorCode(badJson.json), "MALFORMED_REQUEST");
  const badName = await call(base, "POST", "/api/v1/topics", { name: "bad name!" });
  assert.equal(errorCode(badName.json), "INVALID_TOPIC_NAME");
  const badCount = await call(base, "POST", "/api/v1/topics", { name: "t2", partitions: 0 });
  assert.equal(badCount.status, 400);
  const badConfig = await call(base, "POST", "/api/v1/topics", { name: "t2", configs: { "no.such": "1" } });
  assert.equal(errorCode(badConfig.json), "INVALID_CONFIG");
  const tooBig = await call(base, "POST", "/api/v1/topics", { name: "t2", pad: "x".repeat(70 * 1024) });
  assert.equal(tooBig.status, 413);

  const list = await call(base, "GET", "/api/v1/topics");
  assert.deepEqual(
    (list.json.topics as { name: string }[]).map((x) => x.name),
    ["t1"],
  );
  const unknown = await call(base, "GET", "/api/v1/topics/none");
  assert.equal(unknown.status, 404);
  assert.equal(errorCode(unknown.json), "UNKNOWN_TOPIC");

  const altered = await call(base, "PATCH", "/api/v1/topics/t1/configs", {
    configs: { "retention.ms": "1000" },
  });
  assert.equal((altered.json.configs as Record<string, string>)["retention.ms"], "1000");
  const grown = await call(base, "POST", "/api/v1/topics/t1/partitions", { partitions: 3 });
  assert.equal((grown.json.partitions as unknown[]).length, 3);
  const shrink = await call(base, "POST", "/api/v1/topics/t1/partitions", { partitions: 1 });
  assert.equal(errorCode(shrink.json), "INVALID_PARTITIONS");
  // Reassignment needs cluster mode; a malformed replica list is refused before that.
  const single = await call(base, "POST", "/api/v1/topics/t1/partitions/0/reassign", { replicas: [2, 1] });
  assert.equal(single.status, 400);
  assert.equal(errorCode(single.json), "INVALID_REQUEST");
  assert.match(
    String((single.json as { error?: { message?: string } }).error?.message ?? JSON.stringify(single.json)),
    /cluster mode/,
  );
  const badReplicas = await call(base, "POST", "/api/v1/topics/t1/partitions/0/reassign", {
    replicas: ["a"],
  });
  assert.equal(badReplicas.status, 400);
  const parts = await call(base, "GET", "/api/v1/topics/t1/partitions");
  const p0 = (parts.json.partitions as Record<string, unknown>[])[0]!;
  assert.deepEqual(Object.keys(p0).sort(), [
    "figuresKnown",
    "highWatermark",
    "logEndOffset",
    "logStartOffset",
    "partition",
    "quarantined",
    "segments",
    "sizeBytes",
  ]);

  assert.equal((await call(base, "DELETE", "/api/v1/topics/t1")).status, 200);
  assert.equal((await call(base, "DELETE", "/api/v1/topics/t1")).status, 404);
  const wrongMethod = await call(base, "PUT", "/api/v1/topics");
  assert.equal(wrongMethod.status, 405);
  assert.equal((await call(base, "GET", "/api/v1/nothing")).status, 404);
});

test("message browser: from an offset or a timestamp, text or base64, bounded N", async (t) => {
  const { broker, base } = await startHttp(t);
  await broker.createTopic("m", 1);
  await broker.produce("m", 0, batchOf(["zero", "one"], 1000), "leader");
  const binary = Buffer.from([0xff, 0xfe, 0x00]);
  const { BatchBuilder } = await import("../../src/format/batch-builder.js");
  const b = new BatchBuilder({ slabBytes: 4096 });
  b.add(binary, "k", 2000);
  await broker.produce("m", 0, Buffer.from(b.finish()), "leader");

  const page = await call(base, "GET", "/api/v1/topics/m/partitions/0/messages?offset=1&limit=5");
  assert.equal(page.status, 200);
  const msgs = page.json.messages as {
    offset: number;
    key: unknown;
    value: { encoding: string; data: string };
  }[];
  assert.deepEqual(
    msgs.map((m) => m.offset),
    [1, 2],
  );
  assert.deepEqual(msgs[0]!.value, { encoding: "utf8", data: "one", size: 3, truncated: false });
  assert.deepEqual(msgs[1]!.value, {
    encoding: "base64",
    data: binary.toString("base64"),
    size: 3,
    truncated: false,
  });
  assert.equal((msgs[1]!.key as { data: string }).data, "k");
  assert.equal(page.json.nextOffset, 3);

  const limited = await call(base, "GET", "/api/v1/topics/m/partitions/0/messages?limit=1");
  assert.deepEqual(
    (limited.json.messages as { offset: number }[]).map((m) => m.offset),
    [0],
  );
  assert.equal(limited.json.nextOffset, 1);
  const byTime = await call(base, "GET", "/api/v1/topics/m/partitions/0/messages?timestamp=1500");
  assert.deepEqual(
    (byTime.json.messages as { offset: number }[]).map((m) => m.offset),
    [2],
  );

  const tooMany = await call(base, "GET", "/api/v1/topics/m/partitions/0/messages?limit=1001");
  assert.equal(tooMany.status, 400);
  assert.equal(errorCode(tooMany.json), "INVALID_REQUEST");
  assert.equal((await call(base, "GET", "/api/v1/topics/m/partitions/0/messages?offset=-1")).status, 400);
  assert.equal(
    (await call(base, "GET", "/api/v1/topics/m/partitions/0/messages?offset=1&timestamp=1")).status,
    400,
  );
  const noPartition = await call(base, "GET", "/api/v1/topics/m/partitions/7/messages");
  assert.equal(errorCode(noPartition.json), "UNKNOWN_PARTITION");
  const noTopic = await call(base, "GET", "/api/v1/topics/x/partitions/0/messages");
  assert.equal(noTopic.status, 404);
});

test("groups: list, describe with lag, reset offsets and its errors; broker info", async (t) => {
  const { broker, base } = await startHttp(t);
  await broker.createTopic("g", 1);
  await broker.produce("g", 0, batchOf(["a", "b", "c"]), "leader");
  // A group exists once it has committed (a reset never creates one).
  await broker.groups.commit("readers", "", 0, [{ topic: "g", partition: 0, offset: 0 }]);
  const unknown = await call(base, "POST", "/api/v1/groups/nobody/reset-offsets", {
    topic: "g",
    to: "earliest",
  });
  assert.equal(unknown.status, 404);
  const reset = await call(base, "POST", "/api/v1/groups/readers/reset-offsets", {
    topic: "g",
    to: "offset",
    offset: 1,
  });
  assert.equal(reset.status, 200);
  const list = await call(base, "GET", "/api/v1/groups");
  assert.deepEqual(list.json.groups, [
    { group: "readers", kind: "native", protocolType: "", state: "Empty", members: 0 },
  ]);
  const described = await call(base, "GET", "/api/v1/groups/readers");
  const row = (described.json.partitions as Record<string, unknown>[])[0]!;
  assert.equal(row.committed, 1);
  assert.equal(row.lag, 2);
  assert.equal((await call(base, "GET", "/api/v1/groups/none")).status, 404);
  const badTarget = await call(base, "POST", "/api/v1/groups/readers/reset-offsets", {
    topic: "g",
    to: "sideways",
  });
  assert.equal(badTarget.status, 400);
  const noTopic = await call(base, "POST", "/api/v1/groups/readers/reset-offsets", {
    topic: "none",
    to: "latest",
  });
  assert.equal(errorCode(noTopic.json), "UNKNOWN_TOPIC");

  const info = await call(base, "GET", "/api/v1/broker");
  assert.equal(info.status, 200);
  assert.equal((info.json.settings as Record<string, unknown>).httpPort, 7421);
  assert.equal(info.json.topics, 2, "g and the offsets topic");
});

test("events: an SSE stream pushes snapshots with per-topic rates", async (t) => {
  const { broker, base, http } = await startHttp(t, 50);
  await broker.createTopic("e", 1);
  const url = new URL(`${base}/api/v1/events`);
  const snapshots: { topics: { topic: string; messagesInPerSec: number }[] }[] = [];
  await new Promise<void>((resolve, reject) => {
    const req = request(url, (res) => {
      assert.equal(res.headers["content-type"], "text/event-stream; charset=utf-8");
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
        let end = text.indexOf("\n\n");
        while (end >= 0) {
          const event = text.slice(0, end);
          text = text.slice(end + 2);
          const data = /^data: (.*)$/m.exec(event);
          if (data) snapshots.push(JSON.parse(data[1]!));
          if (snapshots.length === 1) broker.produce("e", 0, batchOf(["1", "2"]), "leader").catch(reject);
          const rising = snapshots.some((s) =>
            s.topics.some((x) => x.topic === "e" && x.messagesInPerSec > 0),
          );
          if (rising) {
            req.destroy();
            resolve();
          }
          end = text.indexOf("\n\n");
        }
      });
    });
    req.on("error", (err) => (snapshots.length > 0 ? undefined : reject(err)));
    req.end();
  });
  assert.ok(snapshots.length >= 2);
  // The feed stops its timer once nobody listens.
  while (http.events.listenerCount > 0) await new Promise((r) => setImmediate(r));
});
