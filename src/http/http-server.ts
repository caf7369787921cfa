/**
 * The broker's HTTP listener (node:http; a JSON API of a dozen routes needs no framework). Every
 * request goes through `#handle`: the Host check (host-check.ts), routing, then the one place where
 * the request is authenticated and authorized (http-access.ts), then the handler, with every error
 * answered as JSON with its ConchError code name. Requests are
 * bounded in time (headers, whole request) and their bodies in size (request-input.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type Logger, pino } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { ErrorCounts } from "../storage/error-counts.js";
import { HostCheck } from "./host-check.js";
import { BASIC_CHALLENGE, OPEN_ACCESS } from "./http-access.js";
import { errorBody, statusFor } from "./http-errors.js";
import { type Access, type Route, Router } from "./router.js";

/** A client must send its headers within this long, and its whole request within the next. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** Idle keep-alive connections are closed after this long. */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

export interface HttpServerOptions {
  logger?: Logger;
  /**
   * Called for every routed request before its handler; throwing refuses it (the error is
   * answered). Without one every request is allowed, as User:ANONYMOUS.
   */
  authorize?: AuthorizeHook;
  /** The names the port answers to besides its addresses (host-check.ts). */
  hostNames?: readonly string[];
}

export type AuthorizeHook = (
  req: IncomingMessage,
  route: Route,
  params: Readonly<Record<string, string>>,
) => Promise<Access>;

export class HttpServer {
  /** Requests answered with an error, by code, for metrics. */
  readonly errors = new ErrorCounts();
  #router = new Router([]);
  readonly #server: Server;
  readonly #logger: Logger;
  readonly #authorize: AuthorizeHook;
  readonly #hosts: HostCheck;
  readonly #sockets = new Set<Socket>();

  constructor(options: HttpServerOptions = {}) {
    this.#logger = (options.logger ?? pino({ enabled: false })).child({ component: "http" });
    this.#authorize = options.authorize ?? (() => Promise.resolve(OPEN_ACCESS));
    this.#hosts = new HostCheck(options.hostNames);
    this.#server = createServer(
      { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
      (req, res) => {
        this.#handle(req, res).catch((err: unknown) => this.#logger.error({ err }, "HTTP handler failed"));
      },
    );
    this.#server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    this.#server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
    this.#server.on("clientError", (err, socket) => {
      // A malformed request line or headers, or a timeout: answered if the socket still can be.
      if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
      else socket.destroy();
      this.#logger.debug({ err }, "bad HTTP request");
    });
  }

  setRoutes(routes: readonly Route[]): void {
    this.#router = new Router(routes);
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(port, host, () => {
        this.#server.off("error", reject);
        this.#hosts.bind(this.address());
        resolve(this.address());
      });
    });
  }

  address(): AddressInfo {
    const a = this.#server.address();
    if (a === null || typeof a === "string") throw new Error("the HTTP server is not listening");
    return a;
  }

  get listening(): boolean {
    return this.#server.listening;
  }

  /** Open HTTP connections (event streams included). */
  get connectionCount(): number {
    return this.#sockets.size;
  }

  /** Stops accepting and closes every connection, event streams included. */
  close(): Promise<void> {
    if (!this.#server.listening) return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeIdleConnections();
    for (const socket of this.#sockets) socket.destroy();
    return closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (!this.#hosts.allows(req.headers.host)) {
        // 421: this port does not serve that name (a rebound DNS name, a wrong proxy target).
        const err = new ConchError(
          ErrorCode.INVALID_REQUEST,
          `this port does not serve the host ${JSON.stringify(req.headers.host ?? "")} (see --http-host-names)`,
        );
        this.errors.count(err);
        sendJson(res, 421, errorBody(err));
        return;
      }
      const url = new URL(req.url ?? "/", "http://conch");
      const match = this.#router.match(req.method ?? "GET", url.pathname);
      if (!match.found) {
        if (match.methods.length > 0) {
          const allowed = match.methods.join(", ");
          res.setHeader("allow", allowed);
          const err = new ConchError(
            ErrorCode.UNKNOWN_API,
            `${req.method} is not allowed here (allowed: ${allowed})`,
          );
          this.errors.count(err);
          sendJson(res, 405, errorBody(err));
          return;
        }
        throw new ConchError(ErrorCode.UNKNOWN_API, `no such route: ${req.method} ${url.pathname}`);
      }
      const access = await this.#authorize(req, match.route, match.params);
      const result = await match.route.handler({
        req,
        res,
        params: match.params,
        query: url.searchParams,
        access,
      });
      if (result !== null) sendJson(res, result.status, result.body);
    } catch (err) {
      this.errors.count(err);
      if (!(err instanceof ConchError)) this.#logger.error({ err, url: req.url }, "HTTP request failed");
      if (res.headersSent) res.destroy();
      else {
        const status = statusFor(err);
        if (status === 401) res.setHeader("www-authenticate", BASIC_CHALLENGE);
        sendJson(res, status, errorBody(err));
      }
    }
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  res.end(text);
}
