#!/usr/bin/env node
// Records the Kafka frames a real client exchanges with librdkafka's mock cluster, for golden
// fixtures (test/kafka/fixtures/). Usage (after `npm run build`):
//   node scripts/kafka-capture/capture.mjs OUT.json -- CMD ARGS...   ({BROKER} in ARGS = proxy address)
// It starts the mock (mock-cluster.py), a proxy on 127.0.0.1 port 0 in between, and runs CMD. The
// proxy answers ApiVersions itself with Conch's ranges (so each client picks the versions it will
// send Conch) and rewrites the mock's port in its responses to the proxy's, so clients reconnect
// through it. Every frame is recorded as the mock sent it, before any rewrite.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as k from "../../dist/src/kafka/protocol/index.js";

const { KafkaErrorCode, SUPPORTED_APIS, encodeApiVersionsResponse } = k;

const [out, sep, ...cmd] = process.argv.slice(2);
if (!out || sep !== "--" || cmd.length === 0) throw new Error("usage: capture.mjs OUT.json -- CMD ARGS...");
const here = dirname(fileURLToPath(import.meta.url));

const mock = spawn("/usr/bin/python3", [join(here, "mock-cluster.py")], {
  stdio: ["pipe", "pipe", "inherit"],
});
const mockAddr = await new Promise((resolve) => mock.stdout.once("data", (d) => resolve(String(d).trim())));
const mockPort = Number(mockAddr.split(":").pop());
const frames = [];
let connections = 0;

function splitter(onFrame) {
  let acc = Buffer.alloc(0);
  return (chunk) => {
    acc = Buffer.concat([acc, chunk]);
    while (acc.length >= 4 && acc.length >= 4 + acc.readInt32BE(0)) {
      const n = 4 + acc.readInt32BE(0);
      onFrame(acc.subarray(0, n));
      acc = acc.subarray(n);
    }
  };
}

/** The mock refuses ApiVersions 3 and then the connection: it is asked v0 (its answer is kept too). */
function apiVersionsV0(f) {
  const idLen = Math.max(0, f.readInt16BE(12));
  const head = Buffer.from(f.subarray(0, 14 + idLen));
  head.writeInt32BE(head.length - 4, 0);
  head.writeInt16BE(0, 6);
  return head;
}

/**
 * Conch's ranges; with CAPTURE_RANGES=mock, cut to what the mock also serves (it closes the
 * connection on a version it lacks), so that whole exchanges are recorded with the mock's answers.
 */
function apiVersionsAnswer(p, mockV0) {
  let apis = SUPPORTED_APIS;
  if (process.env.CAPTURE_RANGES === "mock") {
    const mockRanges = new Map();
    for (let i = 0, n = mockV0.readInt32BE(10); i < n; i++) {
      const at = 14 + i * 6;
      mockRanges.set(mockV0.readInt16BE(at), [mockV0.readInt16BE(at + 2), mockV0.readInt16BE(at + 4)]);
    }
    apis = apis
      .flatMap((a) => {
        const m = mockRanges.get(a.apiKey);
        return m && a.apiKey !== 18
          ? [{ ...a, min: Math.max(a.min, m[0]), max: Math.min(a.max, m[1]) }]
          : a.apiKey === 18
            ? [a]
            : [];
      })
      .filter((a) => a.min <= a.max);
  }
  const v = p.apiVersion <= 3 ? p.apiVersion : 0;
  const errorCode = p.apiVersion <= 3 ? KafkaErrorCode.NONE : KafkaErrorCode.UNSUPPORTED_VERSION;
  return encodeApiVersionsResponse(p.correlationId, v, { errorCode, apis, throttleTimeMs: 0 });
}

/** The mock's ranges, learnt from its first ApiVersions answer. */
const mockMax = new Map();
{
  const probe = connect(mockPort, "127.0.0.1");
  probe.write(Buffer.from("0000000e0012000000000001000470726f62", "hex"));
  const answer = await new Promise((r) => probe.once("data", r));
  for (let i = 0, n = answer.readInt32BE(10); i < n; i++)
    mockMax.set(answer.readInt16BE(14 + i * 6), answer.readInt16BE(18 + i * 6));
  // Metadata v0 for "t1": the mock creates the topic, which the stand-in Metadata answers claim.
  probe.write(Buffer.from("000000160003000000000002000470726f620000000100027431", "hex"));
  await new Promise((r) => probe.once("data", r));
  probe.destroy();
}

/**
 * CAPTURE_RANGES=conch: the answers the proxy gives in the mock's place, so that each client goes
 * on to send every request it would send Conch. They are recorded (marked standIn) but are not a
 * reference: they are Conch's encoders, read back by the real clients.
 */
function standIn(frame, port) {
  const { header: h, request: req } = k.decodeKafkaRequest(frame);
  const v = h.apiVersion,
    id = h.correlationId;
  const names = (list) => list.map((name) => ({ name, errorCode: 0, errorMessage: null }));
  switch (h.apiKey) {
    case k.ApiKey.METADATA: {
      const topics = (req.topics ?? ["t1"]).map((name) => ({
        errorCode: 0,
        name,
        isInternal: false,
        partitions: [0, 1, 2, 3].map((i) => ({
          errorCode: 0,
          partitionIndex: i,
          leaderId: 1,
          replicaNodes: [1],
          isrNodes: [1],
          offlineReplicas: [],
        })),
      }));
      return k.encodeMetadataResponse(id, v, {
        throttleTimeMs: 0,
        brokers: [{ nodeId: 1, host: "127.0.0.1", port, rack: null }],
        clusterId: "capture",
        controllerId: 1,
        topics,
      });
    }
    case k.ApiKey.LEAVE_GROUP:
      return k.encodeLeaveGroupResponse(id, v, {
        throttleTimeMs: 0,
        errorCode: 0,
        members: req.members.map((m) => ({ ...m, errorCode: 0 })),
      });
    case k.ApiKey.CREATE_TOPICS:
      return k.encodeCreateTopicsResponse(id, v, {
        throttleTimeMs: 0,
        topics: names(req.topics.map((t) => t.name)),
      });
    case k.ApiKey.DELETE_TOPICS:
      return k.encodeDeleteTopicsResponse(id, v, { throttleTimeMs: 0, topics: names(req.topicNames) });
    case k.ApiKey.CREATE_PARTITIONS:
      return k.encodeCreatePartitionsResponse(id, v, {
        throttleTimeMs: 0,
        topics: names(req.topics.map((t) => t.name)),
      });
    case k.ApiKey.LIST_GROUPS:
      return k.encodeListGroupsResponse(id, v, {
        throttleTimeMs: 0,
        errorCode: 0,
        groups: [{ groupId: "g1", protocolType: "consumer" }],
      });
    case k.ApiKey.DESCRIBE_GROUPS:
      return k.encodeDescribeGroupsResponse(id, v, {
        throttleTimeMs: 0,
        groups: req.groups.map((groupId) => ({
          errorCode: 0,
          groupId,
          groupState: "Empty",
          protocolType: "consumer",
          protocolData: "",
          members: [],
          authorizedOperations: -2147483648,
        })),
      });
    case k.ApiKey.DESCRIBE_CONFIGS:
      return k.encodeDescribeConfigsResponse(id, v, {
        throttleTimeMs: 0,
        results: req.resources.map((r) => ({
          errorCode: 0,
          errorMessage: null,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: [
            {
              name: "retention.ms",
              value: "604800000",
              readOnly: false,
              configSource: 5,
              isSensitive: false,
              synonyms: [],
            },
          ],
        })),
      });
    default:
      return null;
  }
}

const server = createServer((client) => {
  const conn = connections++;
  const upstream = connect(mockPort, "127.0.0.1");
  const pending = [];
  const portBytes = Buffer.alloc(4);
  portBytes.writeInt32BE(mockPort);
  const needle = Buffer.concat([Buffer.from("127.0.0.1"), portBytes]);
  client.on(
    "data",
    splitter((f) => {
      const apiKey = f.readInt16BE(4),
        apiVersion = f.readInt16BE(6),
        correlationId = f.readInt32BE(8);
      frames.push({ conn, dir: "request", apiKey, apiVersion, correlationId, hex: f.toString("hex") });
      const ours = apiKey === 18;
      if (!ours && (mockMax.get(apiKey) === undefined || mockMax.get(apiKey) < apiVersion)) {
        // The mock lacks this API or version (it would close the connection): answer as a broker would.
        const answer = standIn(f, server.address().port);
        if (answer) pending.push({ apiKey, apiVersion, correlationId, answer });
        else client.destroy();
        return;
      }
      pending.push({ apiKey, apiVersion, correlationId, ours });
      upstream.write(ours ? apiVersionsV0(f) : f);
    }),
  );
  const flushAnswers = () => {
    while (pending[0]?.answer) {
      const p = pending.shift();
      frames.push({
        conn,
        dir: "response",
        apiKey: p.apiKey,
        apiVersion: p.apiVersion,
        correlationId: p.correlationId,
        standIn: true,
        hex: p.answer.toString("hex"),
      });
      client.write(p.answer);
    }
  };
  client.on("data", () => queueMicrotask(flushAnswers));
  upstream.on(
    "data",
    splitter((f) => {
      const p = pending.shift();
      queueMicrotask(flushAnswers);
      frames.push({
        conn,
        dir: "response",
        ...(p ? { apiKey: p.apiKey, apiVersion: p.apiVersion } : {}),
        correlationId: f.readInt32BE(4),
        hex: f.toString("hex"),
      });
      if (p?.ours) {
        // The mock's answer was to a v0 request: the client gets (and the capture keeps) ours.
        frames[frames.length - 1].downgraded = true;
        const answer = apiVersionsAnswer(p, f);
        frames.push({ conn, dir: "response", apiKey: p.apiKey, apiVersion: p.apiVersion, correlationId: p.correlationId, standIn: true, hex: answer.toString("hex") });
        return client.write(answer);
      }
      const copy = Buffer.from(f);
      for (let i = copy.indexOf(needle); i >= 0; i = copy.indexOf(needle, i + 1))
        copy.writeInt32BE(server.address().port, i + 9);
      client.write(copy);
    }),
  );
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", end).on("close", end);
  upstream.on("error", end).on("close", end);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const broker = `127.0.0.1:${server.address().port}`;
const child = spawn(
  cmd[0],
  cmd.slice(1).map((a) => a.replaceAll("{BROKER}", broker)),
  { stdio: "inherit" },
);
const code = await new Promise((r) => child.on("exit", r));
writeFileSync(
  out,
  `${JSON.stringify({ command: cmd.join(" "), mock: "librdkafka 2.0.2", frames }, null, 1)}\n`,
);
console.error(`capture: ${frames.length} frames, client exit ${code}`);
mock.stdin.end();
server.close();
process.exit(0);
