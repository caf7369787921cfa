import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { loadBrokerConfig, maxFrameBytes, resolveBrokerConfig } from "../../src/broker/broker-config.js";
import { BROKER_SETTINGS } from "../../src/broker/broker-settings.js";
import { ConchError, ErrorCode } from "../../src/format/errors.js";

const dir = mkdtempSync(join(tmpdir(), "conch-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function configFile(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function invalidConfig(pattern: RegExp): (err: unknown) => boolean {
  return (err) => {
    assert.ok(err instanceof ConchError, String(err));
    assert.equal(err.code, ErrorCode.INVALID_CONFIG);
    assert.match(err.message, pattern);
    return true;
  };
}

test("defaults when nothing is given", () => {
  const c = loadBrokerConfig({ flags: {}, env: {} });
  assert.deepEqual(c, {
    dataDir: "./data",
    host: "127.0.0.1",
    port: 7420,
    flush: "interval",
    flushIntervalMs: 1000,
    segmentBytes: 128 * 1024 * 1024,
    segmentMs: 7 * 24 * 3600 * 1000,
    indexIntervalBytes: 4096,
    retentionMs: 7 * 24 * 3600 * 1000,
    retentionBytes: -1,
    maxBatchBytes: 4 * 1024 * 1024,
    maxConnections: 1000,
    maxConnectionsPerIp: 1000,
    maxQueuedResponseBytes: 256 * 1024 * 1024,
    tailCacheBytes: 256 * 1024 * 1024,
    idleTimeoutMs: 600_000,
    frameTimeoutMs: 30_000,
    autoCreateTopics: false,
    defaultPartitions: 1,
    maxPartitions: 10_000,
    compactionDelayMs: 30_000,
    compactionBytesPerSec: -1,
    producerIdExpirationMs: 86_400_000,
    maxProducerIds: 1000,
    http: true,
    httpHost: "127.0.0.1",
    httpPort: 7421,
    metrics: true,
    kafka: true,
    kafkaPort: 9092,
    kafkaAdvertisedHost: "",
    tlsPort: 7423,
    tlsHost: null,
    kafkaTlsPort: null,
    tlsCert: null,
    tlsKey: null,
    tlsCa: null,
    tlsClientAuth: "none",
    authentication: "none",
    saslPlainWithoutTls: false,
    authorization: "off",
    superUsers: [],
    httpHostNames: [],
    httpMetrics: "login",
    brokerId: -1,
    etcd: "",
    clusterId: "conch",
    leaseTtlSeconds: 2,
    replicaLagTimeMaxMs: 10_000,
    advertisedPort: 0,
    defaultReplicationFactor: 3,
    directReads: "auto",
  });
  assert.equal(maxFrameBytes(c), 4 * 1024 * 1024 + 64 * 1024);
  // The loaded config passes Broker.open's own check as it is (conch broker hands it over whole).
  assert.deepEqual(resolveBrokerConfig(c), c);
});

test("precedence: flags over environment over config file over defaults", () => {
  const file = configFile("all.json", { port: 1111, host: "10.0.0.1", flush: "none", dataDir: "/from/file" });
  const env = { CONCH_PORT: "2222", CONCH_HOST: "0.0.0.0", CONCH_CONFIG: file };
  const c = loadBrokerConfig({ flags: { port: "3333" }, env });
  assert.equal(c.port, 3333); // flag
  assert.equal(c.host, "0.0.0.0"); // environment
  assert.equal(c.flush, "none"); // file
  assert.equal(c.dataDir, "/from/file"); // file
  assert.equal(c.flushIntervalMs, 1000); // default

  const noFlag = loadBrokerConfig({ flags: {}, env });
  assert.equal(noFlag.port, 2222);
  const fileOnly = loadBrokerConfig({ flags: {}, env: { CONCH_CONFIG: file } });
  assert.equal(fileOnly.port, 1111);
});

test("the config file path: --config over CONCH_CONFIG over the fallback", () => {
  const a = configFile("a.json", { port: 1 });
  const b = configFile("b.json", { port: 2 });
  const c = configFile("c.json", { port: 3 });
  assert.equal(loadBrokerConfig({ flags: { config: a }, env: { CONCH_CONFIG: b }, configFile: c }).port, 1);
  assert.equal(loadBrokerConfig({ flags: {}, env: { CONCH_CONFIG: b }, configFile: c }).port, 2);
  assert.equal(loadBrokerConfig({ flags: {}, env: {}, configFile: c }).port, 3);
});

test("undefined flags and empty environment values count as unset", () => {
  const c = loadBrokerConfig({ flags: { port: undefined, logLevel: "debug" }, env: { CONCH_PORT: "" } });
  assert.equal(c.port, 7420);
});

test("every setting is reachable by its flag key, its environment variable and the file", () => {
  const sample: Record<string, [string, unknown]> = {
    dataDir: ["/tmp/x", "/tmp/x"],
    host: ["::1", "::1"],
    port: ["0", 0],
    flush: ["sync", "sync"],
    flushIntervalMs: ["5", 5],
    segmentBytes: ["1048576", 1048576],
    segmentMs: ["60000", 60000],
    indexIntervalBytes: ["1024", 1024],
    retentionMs: ["-1", -1],
    retentionBytes: ["0", 0],
    maxBatchBytes: ["65536", 65536],
    maxConnections: ["7", 7],
    maxConnectionsPerIp: ["3", 3],
    maxQueuedResponseBytes: ["16777216", 16777216],
    tailCacheBytes: ["1048576", 1048576],
    idleTimeoutMs: ["60000", 60000],
    frameTimeoutMs: ["1000", 1000],
    autoCreateTopics: ["true", true],
    defaultPartitions: ["3", 3],
    maxPartitions: ["20", 20],
    compactionDelayMs: ["5000", 5000],
    compactionBytesPerSec: ["1048576", 1048576],
    producerIdExpirationMs: ["60000", 60000],
    maxProducerIds: ["50", 50],
    http: ["false", false],
    httpHost: ["::1", "::1"],
    httpPort: ["0", 0],
    metrics: ["false", false],
    directReads: ["off", "off"],
    kafka: ["false", false],
    kafkaPort: ["0", 0],
    kafkaAdvertisedHost: ["kafka.example", "kafka.example"],
    tlsPort: ["0", 0],
    tlsHost: ["0.0.0.0", "0.0.0.0"],
    kafkaTlsPort: ["9093", 9093],
    tlsCert: ["/etc/conch/broker.pem", "/etc/conch/broker.pem"],
    tlsKey: ["/etc/conch/broker.key", "/etc/conch/broker.key"],
    tlsCa: ["/etc/conch/ca.pem", "/etc/conch/ca.pem"],
    tlsClientAuth: ["required", "required"],
    authentication: ["required", "required"],
    saslPlainWithoutTls: ["true", true],
    authorization: ["on", "on"],
    superUsers: ["User:admin,User:CN=ops", ["User:admin", "User:CN=ops"]],
    httpHostNames: ["conch.example,*", ["conch.example", "*"]],
    httpMetrics: ["open", "open"],
    brokerId: ["4", 4],
    etcd: ["10.0.0.1:2379, etcd-2:2379", "10.0.0.1:2379,etcd-2:2379"],
    clusterId: ["prod-1", "prod-1"],
    leaseTtlSeconds: ["5", 5],
    replicaLagTimeMaxMs: ["2500", 2500],
    advertisedPort: ["17423", 17423],
    defaultReplicationFactor: ["2", 2],
  };
  assert.deepEqual(Object.keys(sample).sort(), BROKER_SETTINGS.map((s) => s.key).sort());
  for (const s of BROKER_SETTINGS) {
    const [text, value] = sample[s.key]!;
    assert.deepEqual(loadBrokerConfig({ flags: { [s.key]: text }, env: {} })[s.key], value, s.flag);
    assert.deepEqual(loadBrokerConfig({ flags: {}, env: { [s.env]: text } })[s.key], value, s.env);
    const file = configFile(`${s.key}.json`, { [s.key]: value });
    assert.deepEqual(loadBrokerConfig({ flags: {}, env: {}, configFile: file })[s.key], value, file);
  }
});

test("the settings table names flags and environment variables consistently", () => {
  const byKey = new Map(BROKER_SETTINGS.map((s) => [s.key, s]));
  assert.equal(byKey.get("dataDir")?.flag, "--data-dir");
  assert.equal(byKey.get("dataDir")?.option, "--data-dir <path>");
  assert.equal(byKey.get("dataDir")?.env, "CONCH_DATA_DIR");
  assert.equal(byKey.get("flushIntervalMs")?.flag, "--flush-interval-ms");
  assert.equal(byKey.get("flushIntervalMs")?.env, "CONCH_FLUSH_INTERVAL_MS");
  assert.equal(byKey.get("autoCreateTopics")?.option, "--auto-create-topics");
  for (const s of BROKER_SETTINGS) assert.ok(s.description.length > 0, s.key);
});

test("boolean flags from commander and from text", () => {
  assert.equal(loadBrokerConfig({ flags: { autoCreateTopics: true }, env: {} }).autoCreateTopics, true);
  for (const [text, value] of [
    ["0", false],
    ["no", false],
    ["FALSE", false],
    ["yes", true],
    ["On", true],
  ] as const) {
    assert.equal(loadBrokerConfig({ env: { CONCH_AUTO_CREATE_TOPICS: text } }).autoCreateTopics, value, text);
  }
});

test("bad values are refused with a message naming the setting and its source", () => {
  const cases: [Parameters<typeof loadBrokerConfig>[0], RegExp][] = [
    [
      { flags: { port: "abc" } },
      /invalid setting port \(from --port\): expected an integer from 0 to 65535, got "abc"/,
    ],
    [{ flags: { port: "70000" } }, /setting port .*got "70000"/],
    [{ env: { CONCH_PORT: "12x" } }, /setting port \(from CONCH_PORT\)/],
    [{ env: { CONCH_PORT: "1e3" } }, /setting port/],
    [{ env: { CONCH_PORT: " 80" } }, /setting port/],
    [
      { env: { CONCH_FLUSH: "always" } },
      /setting flush \(from CONCH_FLUSH\): expected one of "sync", "interval", "none"/,
    ],
    [{ flags: { flushIntervalMs: "0" } }, /setting flushIntervalMs/],
    [{ flags: { segmentBytes: "10" } }, /setting segmentBytes/],
    [{ flags: { retentionMs: "-2" } }, /setting retentionMs .*-1 or an integer/],
    [{ flags: { retentionBytes: "1.5" } }, /setting retentionBytes/],
    [{ flags: { maxBatchBytes: "-1" } }, /setting maxBatchBytes/],
    [{ flags: { maxConnections: "0" } }, /setting maxConnections/],
    [{ env: { CONCH_AUTO_CREATE_TOPICS: "maybe" } }, /setting autoCreateTopics .*true or false/],
    [{ flags: { defaultPartitions: "10001" } }, /setting defaultPartitions/],
    [{ flags: { dataDir: "" } }, /setting dataDir .*non-empty/],
    [{ flags: { host: 5 } }, /setting host/],
  ];
  for (const [sources, pattern] of cases) {
    assert.throws(() => loadBrokerConfig({ env: {}, ...sources }), invalidConfig(pattern), String(pattern));
  }
});

test("bad config files are refused clearly", () => {
  const typo = configFile("typo.json", { prot: 1 });
  assert.throws(
    () => loadBrokerConfig({ env: {}, configFile: typo }),
    invalidConfig(/unknown setting "prot"/),
  );
  const notJson = configFile("bad.json", "{ port: 1");
  assert.throws(() => loadBrokerConfig({ env: {}, configFile: notJson }), invalidConfig(/not valid JSON/));
  const array = configFile("array.json", [1, 2]);
  assert.throws(() => loadBrokerConfig({ env: {}, configFile: array }), invalidConfig(/JSON object/));
  const badValue = configFile("value.json", { port: "x" });
  assert.throws(
    () => loadBrokerConfig({ env: {}, configFile: badValue }),
    invalidConfig(/setting port \(from config file .*value\.json\)/),
  );
  assert.throws(
    () => loadBrokerConfig({ env: { CONCH_CONFIG: join(dir, "missing.json") } }),
    invalidConfig(/cannot read config file .*missing\.json: no such file/),
  );
  assert.throws(
    () => loadBrokerConfig({ flags: { config: true }, env: {} }),
    invalidConfig(/--config needs a file path/),
  );
});

test("resolveBrokerConfig validates a config given in code and fills defaults", () => {
  const c = resolveBrokerConfig({ dataDir: "/x", port: 0 });
  assert.equal(c.port, 0);
  assert.equal(c.flush, "interval");
  assert.throws(() => resolveBrokerConfig({ port: -5 }), invalidConfig(/setting port/));
  assert.throws(
    () => resolveBrokerConfig({ nope: 1 } as unknown as Record<string, never>),
    invalidConfig(/unknown broker setting "nope"/),
  );
});
