import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Conch } from "../../src/client/conch.js";

const CHILD = fileURLToPath(new URL("./broker-child.js", import.meta.url));
// Each round is a kill and a restart at a random moment; 12 of them take a few seconds.
const ROUNDS = 12;

interface Child {
  proc: ChildProcess;
  port: number;
}

/** Starts the broker child and resolves once it listens. */
function startBroker(dataDir: string, port: number): Promise<Child> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [CHILD, dataDir, String(port)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    proc.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (\d+)/.exec(out);
      if (m !== null) resolve({ proc, port: Number(m[1]) });
    });
    proc.once("exit", (code) => reject(new Error(`broker child exited with ${code} before listening`)));
  });
}

function kill(child: Child): Promise<void> {
  return new Promise((resolve) => {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) resolve();
    else {
      child.proc.once("exit", () => resolve());
      child.proc.kill("SIGKILL");
    }
  });
}

/** The value of message i: its number and a body derived from it, so a damaged value shows. */
function messageValue(i: number): string {
  return `${i}:${"abcdefghij".repeat(1 + (i % 20)).slice(i % 7)}`;
}

test("SIGKILL at random moments: every message acknowledged with acks=durable is read back intact", {
  timeout: 40_000,
}, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-crash-"));
  let child = await startBroker(dataDir, 0);
  t.after(async () => {
    await kill(child);
    await rm(dataDir, { recursive: true, force: true });
  });
  const conch = new Conch({
    brokers: [`127.0.0.1:${child.port}`],
    reconnectBackoffMs: 10,
    reconnectBackoffMaxMs: 100,
    requestTimeoutMs: 10_000,
  });
  t.after(() => conch.close());
  await conch.admin().createTopic("crash", { partitions: 3 });

  const acked: number[] = [];
  let failures = 0;
  let stop = false;
  const producer = conch.producer({ acks: "durable", retryBackoffMs: 10, deliveryTimeoutMs: 20_000 });
  const producing = (async () => {
    let i = 0;
    while (!stop) {
      const window: Array<Promise<void>> = [];
      for (let k = 0; k < 200; k++, i++) {
        const seq = i;
        window.push(
          producer.send("crash", { key: String(seq % 11), value: messageValue(seq) }).then(
            () => {
              acked.push(seq);
            },
            () => {
              failures++;
            },
          ),
        );
      }
      await Promise.all(window);
    }
    await producer.close();
  })();

  for (let round = 0; round < ROUNDS; round++) {
    const before = acked.length;
    // Kill at a random moment once this round has seen some progress.
    while (acked.length === before) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 150)));
    await kill(child);
    child = await startBroker(dataDir, child.port);
  }
  const target = acked.length + 1000;
  while (acked.length < target) await new Promise((resolve) => setTimeout(resolve, 5));
  stop = true;
  await producing;
  assert.ok(acked.length > 1000, `${acked.length} acknowledged`);

  // Read everything back and check every acknowledged message is there, byte for byte.
  const admin = conch.admin();
  const ends = await Promise.all([0, 1, 2].map((p) => admin.listOffsets("crash", p, "latest")));
  const consumer = conch.consumer({ topics: ["crash"] });
  const found = new Map<number, string>();
  const next = [0, 0, 0];
  for await (const b of consumer.batches()) {
    const c = b.cursor();
    while (c.next()) {
      const v = c.value().toString();
      found.set(Number(v.slice(0, v.indexOf(":"))), v);
      next[b.partition] = c.offset + 1;
    }
    if (next.every((n, p) => n >= ends[p]!.offset)) break;
  }
  await consumer.close();
  let missing = 0;
  for (const seq of acked) {
    const v = found.get(seq);
    if (v === undefined) missing++;
    else assert.equal(v, messageValue(seq), `message ${seq} damaged`);
  }
  assert.equal(
    missing,
    0,
    `${missing} of ${acked.length} acknowledged messages lost (${failures} sends failed)`,
  );
});
