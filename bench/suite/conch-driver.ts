import type { ClientDriver, Endpoint } from "./types.js";

// Conch's client half. Pending: the SDK in src/client has not landed yet.
export async function conchClient(_endpoint: Endpoint): Promise<ClientDriver> {
  throw new Error("Conch's client SDK (src/client) is not available yet");
}
