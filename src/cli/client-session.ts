/**
 * One SDK client per command, always closed whatever the command's outcome.
 */
import type { Conch } from "../client/conch.js";

/**
 * How long a command waits for a broker that does not answer (the SDK's default is 30 s; a
 * person at a terminal wants to hear sooner that the broker is down).
 */
const REQUEST_TIMEOUT_MS = 10_000;

/** Loads the SDK on first use, so that `--help` and `conch broker` do not pay for it. */
export async function openClient(broker: string): Promise<Conch> {
  const { createClient } = await import("../client/conch.js");
  return createClient({ brokers: [broker], clientId: "conch-cli", requestTimeoutMs: REQUEST_TIMEOUT_MS });
}

/** Runs `work` with a client for `broker`, then closes it. */
export async function withClient<T>(broker: string, work: (client: Conch) => Promise<T>): Promise<T> {
  const client = await openClient(broker);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}
