import { createServer } from "node:net";

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. The peers need a port on their command line
 * (redis-server treats port 0 as "no TCP listener"), so the suite asks the OS for one and hands it
 * over; the start is retried if another process takes it in between.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port assigned"))));
    });
  });
}
