/**
 * A Kafka producer's retry after the broker restarted, cleanly (SIGTERM: the producer snapshot is
 * written at close) and after SIGKILL (the partition replays its log since the last snapshot):
 * either way the partition still knows the batches it stored, and answers their retries with the
 * original offsets instead of storing them again.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { KafkaErrorCode } from "../../../src/kafka/protocol/error-codes.js";
import { RecordBatchBuilder } from "../../../src/kafka/protocol/record-batch-builder.js";
import { produceRequest, RawKafkaClient, readProduceResponse } from "../server/kafka-harness.js";

const CHILD = fileURLToPath(new URL("./kafka-broker-child.js", import.meta.url));

function startBroker(dataDir: string): Promise<{ proc: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [CHILD, dataDir], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (\d+)/.exec(out);
      if (m !== null) resolve({ proc, port: Number(m[1]) });
    });
    proc.once("exit", (code) => reject(new Error(`broker child exited with ${code} before listening`)));
  });
}

function stop(proc: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve();
    else {
      proc.once("exit", () => resolve());
      proc.kill(signal);
    }
  });
}

function batch(seq: number): Buffer {
  const b = new RecordBatchBuilder();
  b.add(1000, null, Buffer.from(`v${seq}`));
  b.add(1000, null, Buffer.from(`w${seq}`));
  return b.finish({ baseOffset: 0, producerId: 500, producerEpoch: 0, baseSequence: seq });
}

/** Produces `batches` (acks all) one request after another; returns [error, base offset] of each. */
async function produce(port: number, batches: Buffer[]): Promise<[number, number][]> {
  const c = await RawKafkaClient.connect(port);
  try {
    const out: [number, number][] = [];
    for (const [i, b] of batches.entries()) {
      c.send(produceRequest(i + 1, "restart", 0, b, -1));
      const [[, , code, base]] = readProduceResponse(await c.next()) as [[string, number, number, number]];
      out.push([code, base]);
    }
    return out;
  } finally {
    c.destroy();
  }
}

for (const signal of ["SIGTERM", "SIGKILL"] as const) {
  test(`kafka idempotent retries after a broker ${signal === "SIGTERM" ? "clean stop" : "SIGKILL"} are still duplicates`, {
    timeout: 30_000,
  }, async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), "conch-kafka-restart-"));
    let child = await startBroker(dataDir);
    t.after(async () => {
      await stop(child.proc, "SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    });
    // 20 batches of two records: several segment rolls (4 KiB segments), so snapshots are taken.
    const seqs = Array.from({ length: 20 }, (_, i) => i * 2);
    const first = await produce(child.port, seqs.map(batch));
    assert.deepEqual(
      first,
      seqs.map((s) => [KafkaErrorCode.NONE, s]),
    );
    await stop(child.proc, signal);
    child = await startBroker(dataDir);
    // The last five batches' retries: the original offsets, nothing stored; then the next batch follows.
    const again = await produce(child.port, [...seqs.slice(-5).map(batch), batch(40)]);
    assert.deepEqual(again, [
      ...seqs.slice(-5).map((s) => [KafkaErrorCode.NONE, s]),
      [KafkaErrorCode.NONE, 40],
    ]);
  });
}
