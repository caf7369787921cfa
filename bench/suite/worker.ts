// One workload against one running broker, in a process of its own: every measurement starts from
// a fresh heap, and the parent can kill a client that hangs. Prints one `RESULT {json}` line.

import { loadClient } from "./clients.js";
import { errorText } from "./deadline.js";
import { reapedChildrenCpuSeconds } from "./proc-cpu.js";
import { RESULT_PREFIX, type WorkerRequest, type WorkerResult } from "./worker-protocol.js";
import { workloadById } from "./workloads/index.js";

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "{}") as WorkerRequest;
  const workload = workloadById(request.workload);
  const factory = await loadClient(request.system);
  const driver = await factory(request.endpoint);
  try {
    const outcome = await workload.run(driver, workload.params(request.scale), {
      system: request.system,
      endpoint: request.endpoint,
      ...(request.kafka ? { kafka: request.kafka } : {}),
    });
    const cpu = process.cpuUsage();
    // With the client programs it ran (kcat), so that their CPU is not counted as other processes'.
    outcome.workerCpuSeconds = (cpu.user + cpu.system) / 1e6 + (reapedChildrenCpuSeconds() ?? 0);
    report({ ok: true, outcome });
  } finally {
    await driver.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    report({ ok: false, error: errorText(err) });
    process.exit(1);
  },
);

function report(result: WorkerResult): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}
