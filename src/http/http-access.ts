/**
 * Who an HTTP request comes from and what it may do (docs/http-api.md, security): the same rules
 * as the native protocol. With --authentication required a request logs in with HTTP Basic, checked
 * by the PLAIN verifier against the user store (constant time; an unknown user costs the same), its
 * failures spaced by the broker's AuthFailureLimiter per address and per user name; a 401 carries
 * `WWW-Authenticate: Basic realm="conch"` so a browser asks for a login and sends it with the
 * console's own requests. With --authorization on, each route's ACL (router.ts RouteAccess) is
 * checked for the principal, as the native request of the same meaning is.
 */
import type { IncomingMessage } from "node:http";
import type { Logger } from "pino";
import { ConchError, ErrorCode } from "../format/errors.js";
import { isAllowed, refusal } from "../security/access-check.js";
import type { Operation, ResourceType } from "../security/acl-rule.js";
import type { Authorizer } from "../security/authorizer.js";
import { ANONYMOUS_PRINCIPAL, type AuthSettings } from "../security/connection-auth.js";
import { MAX_PLAIN_MESSAGE_BYTES, PlainServer } from "../security/plain-server.js";
import type { HttpContext } from "./http-context.js";
import type { Access, Route } from "./router.js";

/** What the HTTP port needs of the broker's security (BrokerSecurity). */
export interface HttpAuthSource {
  readonly auth: AuthSettings;
  readonly authorizer: Authorizer | null;
}

export interface HttpAccessOptions {
  /**
   * Authentication or authorization is configured: until the broker's security is open, routes
   * other than "open" ones answer 503 rather than serve anyone.
   */
  secured?: boolean;
  /** /metrics is served without a login even with --authentication required (--http-metrics open). */
  metricsOpen?: boolean;
  logger?: Logger;
}

/** The realm a browser shows in its login dialog, and keys its saved login by. */
export const BASIC_CHALLENGE = 'Basic realm="conch", charset="UTF-8"';

/** Base64 of the longest PLAIN message, so an oversized header is refused before it is decoded. */
const MAX_BASIC_CHARS = Math.ceil(MAX_PLAIN_MESSAGE_BYTES / 3) * 4;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

class RequestAccess implements Access {
  readonly principal: string;
  readonly #authorizer: Authorizer | null;

  constructor(authorizer: Authorizer | null, principal: string) {
    this.#authorizer = authorizer;
    this.principal = principal;
  }

  allowed(operation: Operation, type: ResourceType, name: string): boolean {
    return isAllowed(this.#authorizer, this.principal, operation, type, name);
  }

  check(operation: Operation, type: ResourceType, name: string): void {
    if (!this.allowed(operation, type, name)) throw refusal(this.principal, operation, type, name);
  }
}

/** Everything allowed: health checks, and a broker without security. */
export const OPEN_ACCESS: Access = new RequestAccess(null, ANONYMOUS_PRINCIPAL);

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class HttpAccess {
  readonly #context: HttpContext;
  readonly #secured: boolean;
  readonly #metricsOpen: boolean;
  readonly #logger: Logger | null;

  constructor(context: HttpContext, options: HttpAccessOptions = {}) {
    this.#context = context;
    this.#secured = options.secured ?? false;
    this.#metricsOpen = options.metricsOpen ?? false;
    this.#logger = options.logger ?? null;
  }

  /** Authenticates the request and checks the route's ACL; throws 401, 403 or 503. */
  async check(req: IncomingMessage, route: Route, params: Readonly<Record<string, string>>): Promise<Access> {
    const need = route.access;
    if (need === "open") return OPEN_ACCESS;
    const security = this.#context.security;
    if (security === null) {
      if (!this.#secured) return OPEN_ACCESS;
      throw new ConchError(ErrorCode.SHUTTING_DOWN, "the broker's security is not open yet");
    }
    if (need === "metrics" && this.#metricsOpen) return OPEN_ACCESS;
    const header = req.headers.authorization;
    let principal = ANONYMOUS_PRINCIPAL;
    if (header !== undefined) principal = await this.#login(header, req.socket.remoteAddress ?? "", security);
    else if (security.auth.required) {
      throw new ConchError(ErrorCode.AUTHENTICATION_FAILED, "log in first (HTTP Basic)");
    }
    const access = new RequestAccess(security.authorizer, principal);
    if (typeof need === "object") {
      if ("cluster" in need) access.check(need.operation, "cluster", "cluster");
      else access.check(need.operation, need.type, params[need.param] ?? "");
    }
    return access;
  }

  async #login(header: string, address: string, security: HttpAuthSource): Promise<string> {
    const { limiter, users } = security.auth;
    const basic = basicCredentials(header);
    // Evaluated after the limiter's spacing, so parallel guesses queue rather than race.
    const admit = limiter.admit(address, basic?.user ?? null);
    if (admit > 0) await wait(admit);
    const plain = new PlainServer(users);
    try {
      if (basic === null) {
        throw new ConchError(
          ErrorCode.AUTHENTICATION_FAILED,
          "Authorization must be Basic <base64 of user:password>",
        );
      }
      await plain.step(basic.message);
      const user = plain.user ?? "";
      limiter.success(address, user);
      return `User:${user}`;
    } catch (err) {
      const delay = limiter.failure(address, plain.claimedUser ?? basic?.user ?? null);
      this.#logger?.info(
        { address, user: plain.claimedUser, why: plain.failure ?? (err as Error).message },
        "HTTP login failed",
      );
      if (delay > 0) await wait(delay);
      throw err;
    }
  }
}

/** `Basic <base64(user:password)>` as a PLAIN message (NUL user NUL password); null when malformed. */
export function basicCredentials(header: string): { user: string; message: Buffer } | null {
  const space = header.indexOf(" ");
  if (space < 0 || header.slice(0, space).toLowerCase() !== "basic") return null;
  const encoded = header.slice(space + 1).trim();
  if (encoded.length > MAX_BASIC_CHARS || !BASE64.test(encoded)) return null;
  const decoded = Buffer.from(encoded, "base64");
  const colon = decoded.indexOf(0x3a);
  if (colon < 0) return null;
  const user = decoded.subarray(0, colon);
  const message = Buffer.concat([Buffer.of(0), user, Buffer.of(0), decoded.subarray(colon + 1)]);
  return { user: user.toString("utf8"), message };
}
