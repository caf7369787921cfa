/**
 * What a Kafka request handler is, and the table the session dispatches by API key. A handler
 * decodes its request from the header's body reader, asks the broker in domain values, and
 * answers with a whole response frame (or its pieces), null for none (a produce with acks = 0), or a promise of
 * either. Failures it can express in its response (per topic, per partition) it answers there,
 * through kafka-errors.ts; anything it throws or rejects with means the request cannot be answered,
 * and the connection is closed once the requests before it are.
 */

import type { Logger } from "pino";
import type { Broker } from "../../broker/broker.js";
import type { ConnectionAuth } from "../../security/connection-auth.js";
import type { AuthorizerSource } from "../../server/handler.js";
import type { BatchConversion } from "../convert/batch-conversion.js";
import type { KafkaRequestHeader } from "../protocol/frame.js";

/** A response frame: one buffer, or pieces written corked one after another (a large fetch). */
export type KafkaResponse = Buffer | readonly Buffer[];

export type KafkaReply = KafkaResponse | null | Promise<KafkaResponse | null>;

/** Where Kafka clients are told the broker is: its node in Metadata and FindCoordinator. */
export interface KafkaNode {
  readonly nodeId: number;
  /** The advertised host; the port is the listener's. */
  readonly host: string;
  readonly port: number;
}

/** What every handler of a connection is given; one per connection, reused for every request. */
export interface KafkaContext {
  readonly broker: Broker;
  readonly node: KafkaNode;
  readonly batches: BatchConversion;
  /** The connection's logger. */
  readonly logger: Logger;
  /** Aborted when the connection ends or the broker stops: long polls end at once. */
  readonly signal: AbortSignal;
  /** The most a response may hold now (the transport's cap, cut while the response budget is full). */
  responseCap(max: number): number;
  /** Set by a handler that may answer with up to this many bytes (a fetch): counted while in flight. */
  responseBytes: number;
  /** A line of a kind a client can repeat at will (a refused batch): rate-limited. */
  limitedLog(key: string, fields: object, msg: string): void;
  /** The connection's login (docs/security.md); null on a listener without security. */
  readonly auth: ConnectionAuth | null;
  /** Where the ACLs are; its authorizer is null with authorization off. */
  readonly authorization: AuthorizerSource | null;
  /** The client id of the request being handled, for the log. */
  clientId: string | null;
  /** Closes the connection once the requests before and including this one are answered. */
  endConnection(): void;
}

export interface KafkaHandler {
  handle(ctx: KafkaContext, h: KafkaRequestHeader): KafkaReply;
  /**
   * True when nothing of the frame is referenced once `handle` returns (decoded into strings and
   * numbers, record bytes converted at once), so a view of the shared read buffer can be handed
   * over as it is. Otherwise the session copies such a view first.
   */
  readonly doneWithFrame?: boolean;
  /** True when the response may be as large as maxFetchBytes (a fetch): it waits for room. */
  readonly largeResponse?: boolean;
}

/** Handlers by Kafka API key. ApiVersions advertises exactly the APIs in the table. */
export type KafkaHandlerTable = Map<number, KafkaHandler>;
