/**
 * The Kafka front-end of a broker: a listener named "kafka" on the ConchServer's transport (so
 * Kafka connections count against the same connection limits, response budget and shutdown as
 * native ones), each connection with a KafkaSession.
 *
 *   const server = new ConchServer(broker, { logger });
 *   const kafka = new KafkaFrontEnd(server, broker, { advertisedHost: "" });
 *   await server.listen(7420, "127.0.0.1");
 *   await kafka.listen(9092, "127.0.0.1");
 *   await kafka.listenTls(9093, "0.0.0.0");   // with security that has TLS material
 *   ...
 *   await server.close(); // closes the Kafka listener too
 *
 * The TLS listener ("kafka-tls") is the same protocol on the transport's TLS listener code, with the
 * broker's TLS material (and its SIGHUP reload, ConchServer.reloadSecurity, like every TLS
 * listener). Each listener advertises itself: Metadata and FindCoordinator answer the port of the
 * listener the client came in on, so a client that bootstraps on the TLS port stays on it.
 */
import type { AddressInfo } from "node:net";
import type { Broker } from "../../broker/broker.js";
import type { Listener } from "../../net/listener.js";
import type { ConchServer } from "../../server/conch-server.js";
import type { BatchConversion } from "../convert/batch-conversion.js";
import { StoringBatches } from "../convert/storing-batches.js";
import { ApiKey } from "../protocol/api-keys.js";
import { defaultKafkaHandlers } from "./handler-table.js";
import { saslAuthenticateHandler, saslHandshakeHandler } from "./handlers/sasl.js";
import type { KafkaHandlerTable, KafkaNode } from "./kafka-handler.js";
import { type KafkaSecurity, KafkaSession, type KafkaSessionDeps } from "./kafka-session.js";

/** The name of the Kafka listener, for logs and metrics. */
export const KAFKA_LISTENER = "kafka";
/** The name of the Kafka protocol's TLS listener (`listenTls`). */
export const KAFKA_TLS_LISTENER = "kafka-tls";

export interface KafkaFrontEndOptions {
  /** What Metadata tells clients to connect to; "" or absent: the address listened on. */
  advertisedHost?: string;
  /** The broker's node id in Metadata. Default 0. */
  nodeId?: number;
  /** Default: defaultKafkaHandlers(), every API the front-end serves. */
  handlers?: KafkaHandlerTable;
  /**
   * The broker's security (BrokerSecurity, docs/security.md): SASL logins (SaslHandshake and
   * SaslAuthenticate are served and advertised only with it), required when its settings say so,
   * and ACLs. Default null: neither.
   */
  security?: KafkaSecurity | null;
}

export class KafkaFrontEnd {
  readonly listener: Listener;
  #tlsListener: Listener | null = null;
  #node: KafkaNode | null = null;
  #tlsNode: KafkaNode | null = null;
  #advertisedHost: string;
  #nodeId: number;
  #server: ConchServer;
  #deps: Omit<KafkaSessionDeps, "node">;

  constructor(server: ConchServer, broker: Broker, options: KafkaFrontEndOptions = {}) {
    this.#advertisedHost = options.advertisedHost ?? "";
    this.#nodeId = options.nodeId ?? 0;
    // One conversion for every connection: it is used synchronously, and reuses its buffers.
    const batches: BatchConversion = new StoringBatches();
    const handlers = options.handlers ?? defaultKafkaHandlers();
    const security = options.security ?? null;
    if (security !== null) {
      handlers.set(ApiKey.SASL_HANDSHAKE, saslHandshakeHandler);
      handlers.set(ApiKey.SASL_AUTHENTICATE, saslAuthenticateHandler);
    }
    this.#server = server;
    this.#deps = { broker, handlers, security, limits: server.limits, batches };
    const deps = { ...this.#deps, node: () => this.node };
    this.listener = server.addListener(KAFKA_LISTENER, undefined, (conn) => new KafkaSession(conn, deps));
  }

  /** Starts listening; port 0 picks a free port. */
  async listen(port: number, host: string): Promise<AddressInfo> {
    const address = await this.listener.listen(port, host);
    this.#node = this.#advertise(address);
    return address;
  }

  /**
   * Starts the TLS listener with the security's TLS material; port 0 picks a free port. Throws
   * when the front-end has no security with TLS material (--tls-cert, --tls-key).
   */
  async listenTls(port: number, host: string): Promise<AddressInfo> {
    const tls = this.#deps.security?.tlsOptions() ?? null;
    if (tls === null) throw new Error("the Kafka TLS listener needs --tls-cert and --tls-key");
    if (this.#tlsListener === null) {
      const deps = { ...this.#deps, node: () => this.tlsNode };
      this.#tlsListener = this.#server.addListener(
        KAFKA_TLS_LISTENER,
        tls,
        (conn) => new KafkaSession(conn, deps),
      );
    }
    const address = await this.#tlsListener.listen(port, host);
    this.#tlsNode = this.#advertise(address);
    return address;
  }

  /** The TLS listener, once `listenTls` has been called; else null. */
  get tlsListener(): Listener | null {
    return this.#tlsListener;
  }

  /** The TLS listener's node. Throws before listenTls() has completed. */
  get tlsNode(): KafkaNode {
    if (this.#tlsNode === null) throw new Error("the kafka TLS listener is not listening");
    return this.#tlsNode;
  }

  #advertise(address: AddressInfo): KafkaNode {
    const host = this.#advertisedHost === "" ? address.address : this.#advertisedHost;
    return { nodeId: this.#nodeId, host, port: address.port };
  }

  /** The node Metadata describes. Throws before listen() has completed. */
  get node(): KafkaNode {
    if (this.#node === null) throw new Error("the kafka listener is not listening");
    return this.#node;
  }

  address(): AddressInfo {
    return this.listener.address();
  }
}
