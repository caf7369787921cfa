// The crowd of workload 7, in a process of its own so that its event loop and its CPU are not the
// measured producer's: opens `connections` producers, each on its own connection, and has each send
// one message every `intervalMs` (their phases spread over the interval) until it is told to stop.
// Prints `READY <n>` once every producer is open, and `DONE {json}` with its counts when it stops
// (on SIGTERM, or when its stdin closes).

import { loadClient } from "./clients.js";
import { errorText } from "./deadline.js";
import type { Producer } from "./types.js";
import type { SlowClientsRequest } from "./worker-protocol.js";
import { payloadBatch } from "./workloads/send-loop.js";

/** Producers opened at once while the crowd connects, so that connecting is not a storm of its own. */
const OPEN_AT_ONCE = 50;
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
  process.stdout.write(`READY ${producers.length}\n`);
  const message = payloadBatch(request.payloadBytes, 1);
  let sent = 0;
  let acknowledged = 0;
  let failed = 0;
  let firstError: string | null = null;
  const onAck = (): void => {
    acknowledged++;
  };
  const onFail = (err: unknown): void => {
    failed++;
    firstError ??= errorText(err);
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
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.stdin.once("close", resolve);
    process.stdin.resume();
  });
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
