/**
 * One listening socket of a broker, with a name for logs and metrics ("conch", later "kafka",
 * "conch-tls"), whose connections speak one protocol: each accepted socket gets a FramedConnection
 * and the listener's Session. A broker may have several; they share one Transport (its bounds,
 * timers and buffers).
 *
 * A plain listener accepts with `pauseOnConnect` and adopts each socket into one that reads
 * through net's `onread` (adopt-socket.ts). A TLS listener (`tls` given) cannot: its sockets read
 * through 'data' events, and `setSecureContext` swaps its certificate for new connections.
 */
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer, type SecureContextOptions, type TlsOptions } from "node:tls";
import type { Logger } from "pino";
import { adoptSocket } from "./adopt-socket.js";
import { FramedConnection } from "./framed-connection.js";
import type { SessionFactory } from "./session.js";
import { SocketReads } from "./socket-reads.js";
import type { Transport } from "./transport.js";

export interface ListenerOptions {
  /** For logs and metrics: unique among a broker's listeners. */
  name: string;
  openSession: SessionFactory;
  /** Serves TLS with these options when given. */
  tls?: TlsOptions;
}

export class Listener {
  readonly name: string;
  readonly tls: boolean;
  #transport: Transport;
  #openSession: SessionFactory;
  #logger: Logger;
  #server: Server;
  #connections = new Set<FramedConnection>();
  #closing: Promise<void> | null = null;
  #handshaking = new Set<Socket>();

  constructor(transport: Transport, options: ListenerOptions) {
    this.name = options.name;
    this.#transport = transport;
    this.#openSession = options.openSession;
    this.#logger = transport.logger.child({ listener: options.name });
    // allowHalfOpen: a client that ends its side still gets the answers to what it sent.
    if (options.tls === undefined) {
      this.tls = false;
      // pauseOnConnect: nothing is read before the socket is adopted (adopt-socket.ts).
      this.#server = createServer({ allowHalfOpen: true, noDelay: true, pauseOnConnect: true }, (socket) =>
        this.#accept(socket, true),
      );
    } else {
      this.tls = true;
      const server = createTlsServer({ ...options.tls, allowHalfOpen: true, noDelay: true }, (socket) =>
        this.#accept(socket, false),
      );
      // A failed handshake (an untrusted certificate either way, not TLS at all) must not leave a
      // half-open socket behind: with allowHalfOpen nothing else would close it, and close() would
      // wait for it forever.
      server.on("tlsClientError", (err, socket) => {
        this.#logger.debug({ err, remote: socket.remoteAddress }, "TLS handshake failed");
        socket.destroy();
      });
      // Sockets still in their TLS handshake, which close() ends rather than waits for.
      server.on("connection", (raw: Socket) => {
        this.#handshaking.add(raw);
        raw.once("close", () => this.#handshaking.delete(raw));
      });
      this.#server = server;
    }
    this.#server.on("error", (err) => this.#logger.error({ err }, "server error"));
  }

  /** Starts listening; port 0 picks a free port. */
  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.#server.once("error", onError);
      this.#server.listen(port, host, () => {
        this.#server.off("error", onError);
        const address = this.address();
        this.#logger.debug({ host: address.address, port: address.port }, "listening");
        this.#transport.started();
        resolve(address);
      });
    });
  }

  /** The address listened on. Throws before listen() has completed. */
  address(): AddressInfo {
    const address = this.#server.address();
    if (address === null || typeof address === "string") throw new Error("the server is not listening");
    return address;
  }

  get listening(): boolean {
    return this.#server.listening;
  }

  /** Connections of this listener open now. */
  get connectionCount(): number {
    return this.#connections.size;
  }

  /** This listener's open connections, for tests and diagnostics. */
  connections(): FramedConnection[] {
    return [...this.#connections];
  }

  /** A TLS listener's new certificate and key (or any secure context option), for new connections. */
  setSecureContext(options: SecureContextOptions): void {
    if (!this.tls) throw new Error(`listener ${this.name} does not serve TLS`);
    (this.#server as ReturnType<typeof createTlsServer>).setSecureContext(options);
  }

  /** Stops accepting; resolves once every connection of this listener has closed. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const raw of this.#handshaking) raw.destroy();
    return this.#closing;
  }

  #accept(accepted: Socket, adopt: boolean): void {
    this.#handshaking.delete((accepted as Socket & { _parent?: Socket })._parent ?? accepted);
    const transport = this.#transport;
    const reads = adopt ? new SocketReads(transport.scratch, { borrow: true }) : null;
    let socket = accepted;
    let onread = false;
    if (reads !== null) ({ socket, onread } = adoptSocket(accepted, reads));
    if (this.#closing !== null) {
      socket.destroy();
      return;
    }
    const ip = socket.remoteAddress ?? "";
    const admitted = transport.admission.admit(ip);
    if (admitted === null) {
      socket.destroy();
      return;
    }
    const conn = new FramedConnection(transport.nextId(), socket, {
      limits: transport.limits,
      logger: this.#logger,
      openSession: this.#openSession,
      refusal: admitted.refusal,
      reads: onread ? reads : null,
      pool: transport.frames,
      budget: transport.budget,
      clock: transport.sweep,
      lines: transport.lines,
    });
    this.#connections.add(conn);
    transport.connections.add(conn);
    conn.closed.then(() => {
      this.#connections.delete(conn);
      transport.connections.delete(conn);
      transport.admission.release(ip, admitted);
    });
  }
}
