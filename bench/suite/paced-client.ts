// Workload 8's paced producer, in a process of its own so that the latency it measures is the
// broker's and the network's, not the time the consumer's work in the worker's event loop held it
// (a consumer reading 1 KiB messages at 200 MB/s keeps an event loop busy). Opens one producer on
// `stream`, prints `READY` and sends at `rate` (paced-producer.ts) until its stdin closes, then
// prints `DONE {"sent": n, "latencyUs": {...}}`.

import { loadClient } from "./clients.js";
import { errorText } from "./deadline.js";
import { stopRequested } from "./side-process.js";
import type { PacedClientRequest } from "./worker-protocol.js";
import { startPaced } from "./workloads/paced-producer.js";

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "{}") as PacedClientRequest;
  const driver = await (await loadClient(request.system))(request.endpoint);
  const producer = await driver.openProducer(request.stream, "interval");
  const run = startPaced(producer, request.rate, request.payloadBytes);
  process.stdout.write("READY\n");
  await stopRequested();
  const result = await run.stop();
  await producer.close();
  await driver.close();
  process.stdout.write(`DONE ${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stdout.write(`FAILED ${errorText(err)}\n`);
    process.exit(1);
  },
);
