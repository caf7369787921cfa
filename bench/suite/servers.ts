import { natsServer } from "../peers/nats-server.js";
import { redisServer } from "../peers/redis-server.js";
import type { SystemId } from "./clients.js";
import { conchServer } from "./conch-server.js";
import type { ServerSpec } from "./types.js";

/** The server half of each system, in the order the suite runs them. */
export const SERVERS: Record<SystemId, ServerSpec> = {
  conch: conchServer,
  nats: natsServer,
  redis: redisServer,
};
