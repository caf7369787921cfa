#!/usr/bin/env node
// A local 3-broker cluster for trying cluster mode (docs/cluster.md): one etcd on 127.0.0.1:2379
// and brokers 1-3 on native ports 7420/7430/7440, Kafka 9092/9093/9094 and HTTP 7421/7431/7441,
// data under ./cluster-data (kept between runs). Ctrl-C stops them all. Run after `npm run build`
// (`npm run cluster:local` does both).
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";

const dataRoot = resolve(process.env.CONCH_CLUSTER_DATA ?? "cluster-data");
if (spawnSync("etcd", ["--version"], { stdio: "ignore" }).status !== 0) {
  console.error(
    "etcd is not installed. Cluster mode keeps its metadata in etcd:\n" +
      "  Debian/Ubuntu: sudo apt-get install etcd-server\n" +
      "  elsewhere:     https://etcd.io/docs/latest/install/ (any etcd 3.4 or later, on the PATH)",
  );
  process.exit(1);
}
mkdirSync(dataRoot, { recursive: true });
const children = [];

function start(name, command, args) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  for (const stream of [child.stdout, child.stderr]) {
    let rest = "";
    stream.on("data", (chunk) => {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) process.stdout.write(`[${name}] ${line}\n`);
    });
  }
  child.on("exit", (code, signal) => {
    process.stdout.write(`[${name}] exited (${signal ?? code})\n`);
    if (!stopping) stop(1);
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  // Brokers first (each leaves the cluster), then etcd.
  const brokers = children.slice(1);
  let left = brokers.length;
  const done = () => {
    children[0]?.kill("SIGKILL");
    process.exit(code);
  };
  if (left === 0) done();
  for (const b of brokers) {
    if (b.exitCode !== null || b.signalCode !== null) {
      if (--left === 0) done();
      continue;
    }
    b.once("exit", () => {
      if (--left === 0) done();
    });
    b.kill("SIGTERM");
  }
  setTimeout(done, 10_000).unref();
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

start("etcd", "etcd", [
  "--name=conch-local",
  `--data-dir=${join(dataRoot, "etcd")}`,
  "--listen-client-urls=http://127.0.0.1:2379",
  "--advertise-client-urls=http://127.0.0.1:2379",
  "--listen-peer-urls=http://127.0.0.1:2380",
  "--initial-advertise-peer-urls=http://127.0.0.1:2380",
  "--initial-cluster=conch-local=http://127.0.0.1:2380",
  "--logger=zap",
  "--log-level=warn",
]);
// etcd answers within about half a second of starting; each broker retries its first call.
const conch = new URL("../bin/conch.js", import.meta.url).pathname;
for (const id of [1, 2, 3]) {
  const base = 7410 + 10 * id;
  start(`broker-${id}`, process.execPath, [
    conch,
    "broker",
    "--broker-id", String(id),
    "--etcd", "127.0.0.1:2379",
    "--data-dir", join(dataRoot, `broker-${id}`),
    "--port", String(base),
    "--http-port", String(base + 1),
    "--kafka-port", String(9091 + id),
    "--log-format", "pretty",
  ]);
}
process.stdout.write(
  "\nstarting etcd and brokers 1-3 (native 127.0.0.1:7420,7430,7440; Kafka 9092-9094); Ctrl-C stops them\n" +
    "try: conch topic create orders --partitions 6 --replication-factor 3\n" +
    "     kcat -b 127.0.0.1:9092 -L      (the brokers, and each partition's leader, replicas and ISR)\n\n",
);
