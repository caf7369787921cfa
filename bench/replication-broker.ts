// One broker of `bench/replication.ts`, in its own process: a Broker, a native listener on a free
// loopback port and a ReplicaManager whose metadata side is the parent (over IPC): it reports its
// port, then takes the endpoints of both brokers and the partition role, applies it and says ready.
// ISR proposals are accepted (nothing else changes the epoch in the bench).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Broker } from "../src/broker/broker.js";
import { ReplicaManager } from "../src/cluster/replica-manager.js";
import type { BrokerEndpoint, PartitionRole } from "../src/cluster/roles.js";
import { ConchServer } from "../src/server/conch-server.js";

interface Setup {
  endpoints: BrokerEndpoint[];
  role: PartitionRole;
  partitions: number;
}

const id = Number(process.argv[2]);
const dataDir = await mkdtemp(join(tmpdir(), `conch-bench-repl-${id}-`));
const broker = await Broker.open({ dataDir }, pino({ level: "warn" }));
const server = new ConchServer(broker, { shutdownTimeoutMs: 1000 });
const { port } = await server.listen(0, "127.0.0.1");
let manager: ReplicaManager | null = null;

process.on("message", (msg: Setup | "stop") => {
  if (msg === "stop") {
    void (async () => {
      await manager?.close();
      await server.close();
      await broker.close();
      await rm(dataDir, { recursive: true, force: true });
      process.exit(0);
    })();
    return;
  }
  void (async () => {
    await broker.createTopic(msg.role.topic, msg.partitions);
    manager = new ReplicaManager({
      broker,
      view: {
        brokerId: id,
        endpoint: (b) => msg.endpoints.find((e) => e.id === b),
        leaseHeld: () => true,
        proposeIsr: async () => true,
      },
      minInsyncReplicas: () => 2,
    });
    for (let p = 0; p < msg.partitions; p++) await manager.applyRole({ ...msg.role, partition: p });
    process.send?.("ready");
  })();
});
process.send?.({ port });
