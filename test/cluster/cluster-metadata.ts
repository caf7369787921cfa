/** Native Metadata and CreateTopic on one broker process, for the multi-process cluster tests and benches. */
import * as p from "../../src/protocol/index.js";
import { TestClient } from "../server/helpers.js";

export async function metadataFrom(port: number, topics: string[] = []): Promise<p.MetadataResponse> {
  const c = await TestClient.connect(port);
  try {
    await c.handshake();
    return p.decodeMetadataResponse(await c.call((id) => p.encodeMetadataRequest(id, topics)));
  } finally {
    c.destroy();
  }
}

/** Metadata has no change event a client can await: ask until it holds. */
export async function metadataUntil(
  port: number,
  ok: (m: p.MetadataResponse) => boolean,
  timeoutMs: number,
): Promise<p.MetadataResponse> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const m = await metadataFrom(port).catch(() => null);
    if ((m !== null && ok(m)) || performance.now() > until) {
      if (m === null) throw new Error(`no Metadata answer from port ${port}`);
      return m;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Creates `topic` through the broker at `port` with replication factor 3 and min.insync.replicas 2. */
export async function createReplicatedTopic(port: number, topic: string, partitions: number): Promise<void> {
  const c = await TestClient.connect(port);
  try {
    await c.handshake();
    p.decodeCreateTopicResponse(
      await c.call((id) =>
        p.encodeCreateTopicRequest(id, {
          topic,
          partitions,
          configs: { "replication.factor": "3", "min.insync.replicas": "2" },
        }),
      ),
    );
  } finally {
    c.destroy();
  }
}
