/**
 * A TCP proxy that loses one produce acknowledgment: it forwards everything between clients and
 * the broker, except that for the first Produce request it sees it forwards the request, waits for
 * the broker's answer (so the batch is stored), and then closes both sides instead of passing the
 * answer on. The client never learns its batch was stored, and retries it. It serves Kafka's
 * protocol and Conch's alike: both frames start with a 4-byte size, a request has its API key at
 * byte 4 and its correlation id at byte 8, and a response its correlation id at byte 4.
 *
 * For Kafka it listens on 127.0.0.2 at the broker's port, so a broker advertising 127.0.0.2 sends
 * every client connection, the reconnects after a Metadata included, through it.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";

/** The Produce API keys: Kafka's and Conch's. */
export const KAFKA_PRODUCE = 0;
export const NATIVE_PRODUCE = 5;

export class AckDroppingProxy {
  readonly #server: Server;
  readonly #produceKey: number;
  readonly #sockets = new Set<Socket>();
  /** Produce acknowledgments dropped so far (1 once the fault has fired). */
  dropped = 0;

  private constructor(server: Server, produceKey: number) {
    this.#server = server;
    this.#produceKey = produceKey;
  }

  /** A proxy to the broker at 127.0.0.1:`brokerPort`, listening at `host`:`port`. */
  static async start(
    brokerPort: number,
    { produceKey = KAFKA_PRODUCE, host = "127.0.0.2", port = brokerPort } = {},
  ): Promise<AckDroppingProxy> {
    const server = createServer();
    const proxy = new AckDroppingProxy(server, produceKey);
    server.on("connection", (client) => proxy.#pipe(client, brokerPort));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, resolve);
    });
    return proxy;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  #pipe(client: Socket, brokerPort: number): void {
    const broker = connect(brokerPort, "127.0.0.1");
    this.#sockets.add(client).add(broker);
    const end = (): void => {
      client.destroy();
      broker.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(broker);
    };
    client.on("error", end).on("close", end);
    broker.on("error", end).on("close", end);
    /** The correlation id of the produce whose answer is to be lost, once it is sent; else -1. */
    let victim = -1;
    let fromClient = Buffer.alloc(0);
    client.on("data", (chunk: Buffer) => {
      broker.write(chunk);
      if (this.dropped > 0 || victim >= 0) return;
      fromClient = Buffer.concat([fromClient, chunk]);
      while (fromClient.length >= 4 && fromClient.length >= 4 + fromClient.readInt32BE(0)) {
        const size = fromClient.readInt32BE(0);
        if (fromClient.readInt16BE(4) === this.#produceKey) victim = fromClient.readInt32BE(8);
        fromClient = fromClient.subarray(4 + size);
        if (victim >= 0) return;
      }
    });
    let fromBroker = Buffer.alloc(0);
    broker.on("data", (chunk: Buffer) => {
      if (victim < 0) {
        client.write(chunk);
        return;
      }
      // Answers come in request order: pass on those before the produce's, then cut.
      fromBroker = Buffer.concat([fromBroker, chunk]);
      while (fromBroker.length >= 8 && fromBroker.length >= 4 + fromBroker.readInt32BE(0)) {
        const frame = fromBroker.subarray(0, 4 + fromBroker.readInt32BE(0));
        fromBroker = fromBroker.subarray(frame.length);
        if (frame.readInt32BE(4) === victim) {
          this.dropped++;
          end();
          return;
        }
        client.write(frame);
      }
    });
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
