import type { ServerSpec } from "./types.js";

// Conch's server half. Pending: the broker and its CLI have not landed yet.
export const conchServer: ServerSpec = {
  name: "Conch",
  async probe() {
    return { ok: false, reason: "pending: Conch's server and client SDK have not landed yet" };
  },
  unsupported() {
    return null;
  },
  describe(durability) {
    return durability === "interval" ? "flush=interval, flush.interval.ms=1000, acks=leader" : "acks=durable";
  },
  start() {
    return Promise.reject(new Error("Conch's server is not available yet"));
  },
};
