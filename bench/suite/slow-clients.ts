// The crowd of workload 7, in a process of its own so that its event loop and its CPU are not the
// measured producer's: opens `connections` producers, each on its own connection, and has each send
// one message every `intervalMs` (their phases spread over the interval) until it is told to stop.
// Prints `READY <n>` once every producer is open and the crowd has run WARM_ROUNDS rounds, and
// `DONE {json}` with its counts when it stops (on SIGTERM, or when its stdin closes).

import { loadClient } from "./clients.js";
import { errorText } from "./deadline.js";
import { stopRequested } from "./side-process.js";
import type { Producer } from "./types.js";
import type { SlowClientsRequest } from "./worker-protocol.js";
import { payloadBatch } from "./workloads/send-loop.js";

/** Producers opened at once while the crowd connects, so that connecting is not a storm of its own. */
const OPEN_AT_ONCE = 50;
/**
 * Rounds (one send per producer each) acknowledged before the crowd says it is ready. Its first two
 * seconds cost two to three times its steady rate in both processes (each producer's first sends,
 * code not yet optimized: docs/performance/scale.md, "Workload 7, second round"); the workload measures
 * the fast producer beside 1,000 connections producing slowly, not beside their start.
 */
const WARM_ROUNDS = 2;
/** How long a stopping crowd waits for its last sends' acknowledgements. */
const SETTLE_MS = 10_000;

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "{}") as SlowClientsRequest;
  const driver = await (await loadClient(request.system))(request.endpoint);
  const producers: Producer[] = [];
  for (let i = 0; i < request.connections; i += OPEN_AT_ONCE) {
    const n = Math.min(OPEN_AT_ONCE, request.connections - i);
    producers.push(
      ...(await Promise.all(
        Array.from({ length: n }, () => driver.openProducer(request.stream, "interval")),
      )),
    );
  }
  const message = payloadBatch(request.payloadBytes, 1);
  let sent = 0;
  let acknowledged = 0;
  let failed = 0;
  let firstError: string | null = null;
  let ready = false;
  const onAck = (): void => {
    acknowledged++;
    if (!ready && acknowledged >= WARM_ROUNDS * producers.length) {
      ready = true;
      process.stdout.write(`READY ${producers.length}\n`);
    }
  };
  const onFail = (err: unknown): void => {
    failed++;
    firstError ??= errorText(err);
    // Before READY nobody reads the counts: a failed warm-up send fails the run at once.
    if (!ready) {
      process.stdout.write(`FAILED a send failed while the crowd warmed up: ${firstError}\n`);
      process.exit(1);
    }
  };
  const timers = producers.map((producer, i) => {
    const send = (): void => {
      sent++;
      producer.sendBatch(message).then(onAck, onFail);
    };
    const phase = (i * request.intervalMs) / producers.length;
    let interval: NodeJS.Timeout | undefined;
    const start = setTimeout(() => {
      send();
      interval = setInterval(send, request.intervalMs);
    }, phase);
    return () => {
      clearTimeout(start);
      clearInterval(interval);
    };
  });
  await stopRequested();
  for (const stop of timers) stop();
  // Sends still in flight are waited for (a bounded time): closing under them would fail them.
  const until = Date.now() + SETTLE_MS;
  while (acknowledged + failed < sent && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  await Promise.allSettled(producers.map((p) => p.close()));
  await driver.close();
  process.stdout.write(`DONE ${JSON.stringify({ sent, acknowledged, failed, firstError })}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stdout.write(`FAILED ${errorText(err)}\n`);
    process.exit(1);
  },
);
