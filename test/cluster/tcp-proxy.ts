/**
 * An in-test TCP proxy on 127.0.0.1 port 0 in front of a broker's native port, whose link the
 * test can cut and restore: `cut()` destroys the proxied connections it selects and refuses new
 * ones, `restore()` lets them through again. Connections are selected by their first bytes (the
 * native handshake carries the client id, `conch-replica-<brokerId>` for a follower's fetcher),
 * so one follower's link to its leader can be cut while the other's stays.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export class TcpProxy {
  readonly port: number;
  readonly #server: Server;
  /** The broker's port; connections made before it is set are closed (the client tries again). */
  targetPort = 0;
  /** Open pairs: the client's side, the broker's side, and the first bytes the client sent. */
  readonly #pairs = new Map<Socket, { upstream: Socket; first: Buffer }>();
  /** While cut: which connections the cut applies to. */
  #cut: ((firstBytes: Buffer) => boolean) | null = null;
  /** Selected connections destroyed or refused since the cut. */
  refused = 0;

  private constructor(server: Server, port: number) {
    this.#server = server;
    this.port = port;
    server.on("connection", (socket) => this.#accept(socket));
  }

  /** A proxy to 127.0.0.1:`targetPort` (set later). */
  static async start(): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    return new TcpProxy(server, address.port);
  }

  /** Selects connections whose first bytes contain `text` (e.g. a client id). */
  static containing(text: string): (firstBytes: Buffer) => boolean {
    const needle = Buffer.from(text);
    return (firstBytes) => firstBytes.includes(needle);
  }

  /** Destroys the connections `selects` picks (default: all) and refuses new ones until `restore()`. */
  cut(selects: (firstBytes: Buffer) => boolean = () => true): void {
    this.#cut = selects;
    for (const [socket, pair] of this.#pairs) {
      if (!selects(pair.first)) continue;
      this.refused++;
      socket.destroy();
      pair.upstream.destroy();
    }
  }

  restore(): void {
    this.#cut = null;
  }

  async close(): Promise<void> {
    for (const [socket, pair] of this.#pairs) {
      socket.destroy();
      pair.upstream.destroy();
    }
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #accept(socket: Socket): void {
    socket.on("error", () => {});
    // Nothing is forwarded until the first bytes say whether the connection is selected.
    socket.once("data", (first: Buffer) => {
      if (this.#cut?.(first) === true || this.targetPort === 0) {
        this.refused++;
        socket.destroy();
        return;
      }
      const upstream = createConnection({ host: "127.0.0.1", port: this.targetPort });
      upstream.on("error", () => socket.destroy());
      socket.on("error", () => upstream.destroy());
      upstream.on("close", () => socket.destroy());
      socket.on("close", () => {
        upstream.destroy();
        this.#pairs.delete(socket);
      });
      this.#pairs.set(socket, { upstream, first });
      upstream.write(first);
      socket.pipe(upstream);
      upstream.pipe(socket);
    });
  }
}
