import type { ClientFactory } from "./types.js";

export type SystemId = "conch" | "nats" | "redis";

/**
 * The client half of each system, loaded lazily in the worker process so that a system whose client
 * cannot load (Conch before its SDK exists) fails only its own rows.
 */
export async function loadClient(system: SystemId): Promise<ClientFactory> {
  switch (system) {
    case "nats":
      return (await import("../peers/nats-driver.js")).natsClient;
    case "redis":
      return (await import("../peers/redis-driver.js")).redisClient;
    case "conch":
      return (await import("./conch-driver.js")).conchClient;
  }
}
