/**
 * What a broker's listeners share for security (docs/security.md), made from its settings: the TLS
 * material of the TLS listener, the user store SASL logins are checked against, the failure
 * limiter, whether logging in is required, and the ACLs with --authorization on. Protocol-neutral: the native session uses it now,
 * the Kafka listener's session the same way (`auth` and `tlsOptions`).
 *
 * `reload()` (SIGHUP) reads the certificate files, users.json, acls.json and quotas.json again: new TLS handshakes and new
 * logins use them; open connections keep what they have.
 */
import type { TlsOptions } from "node:tls";
import type { Logger } from "pino";
import type { BrokerConfig } from "../broker/broker-config.js";
import { ConchError, ErrorCode } from "../format/errors.js";
import type { AclFilter, AclRule } from "../security/acl-rule.js";
import { AclStore } from "../security/acl-store.js";
import { AuthFailureLimiter, type AuthFailureLimiterOptions } from "../security/auth-failure-limiter.js";
import type { Authorizer } from "../security/authorizer.js";
import type { AuthSettings } from "../security/connection-auth.js";
import { type QuotaLimits, QuotaManager } from "../security/quota-manager.js";
import type { CredentialLookup } from "../security/sasl-server.js";
import type { ScramCredential, ScramMechanism } from "../security/scram-credential.js";
import { TlsMaterial } from "../security/tls-material.js";
import { type UserInfo, UserStore } from "../security/user-store.js";
import type { AuthorizerSource } from "./handler.js";
import { applyQuotaFile, writeQuotaFile } from "./quota-file.js";

/** Once a minute the limiter reports the failures seen and forgets old ones. */
const SWEEP_EVERY_MS = 60_000;

export class BrokerSecurity implements CredentialLookup, AuthorizerSource {
  /** The TLS listener's material; null when no certificate is configured. */
  readonly tls: TlsMaterial | null;
  readonly auth: AuthSettings;
  readonly limiter: AuthFailureLimiter;
  /** Produce, fetch and request rates (quotas.json); applied only while `throttling`. */
  readonly quotas = new QuotaManager();
  #quotaEntries = 0;
  #users: UserStore;
  /** The ACL rules; enforced only with --authorization on. */
  #acls: AclStore;
  #authorizing: boolean;
  #superUsers: readonly string[];
  #dataDir: string;
  #logger: Logger;
  #sweep: NodeJS.Timeout;

  private constructor(
    config: BrokerConfig,
    tls: TlsMaterial | null,
    users: UserStore,
    acls: AclStore,
    logger: Logger,
    limiter: AuthFailureLimiterOptions,
  ) {
    this.tls = tls;
    this.#users = users;
    this.#acls = acls;
    this.#authorizing = config.authorization === "on";
    this.#superUsers = config.superUsers;
    this.#dataDir = config.dataDir;
    this.#logger = logger;
    this.limiter = new AuthFailureLimiter({
      ...limiter,
      report: (summary) => logger.warn(summary, `${summary.failures} failed logins in the last minute`),
    });
    this.auth = {
      users: this,
      policy: { allowPlainWithoutTls: config.saslPlainWithoutTls },
      limiter: this.limiter,
      required: config.authentication === "required",
    };
    this.#sweep = setInterval(() => {
      this.limiter.sweep();
      this.quotas.sweep();
    }, SWEEP_EVERY_MS);
    this.#sweep.unref();
  }

  /**
   * Loads the TLS files (when --tls-cert is given) and the user store; fails with INVALID_CONFIG
   * or STORAGE_ERROR naming the file, so a broker with a bad file does not start.
   */
  static async open(
    config: BrokerConfig,
    logger: Logger,
    limiter: AuthFailureLimiterOptions = {},
  ): Promise<BrokerSecurity> {
    let tls: TlsMaterial | null = null;
    if (config.tlsCert !== null || config.tlsKey !== null) {
      tls = await TlsMaterial.load({
        certFile: required(config.tlsCert, "--tls-key needs --tls-cert"),
        keyFile: required(config.tlsKey, "--tls-cert needs --tls-key"),
        ...(config.tlsCa === null ? {} : { caFile: config.tlsCa }),
        clientAuth: config.tlsClientAuth,
      });
      for (const warning of tls.current.warnings) logger.warn({ file: config.tlsCert }, warning);
    }
    const users = await UserStore.open(config.dataDir);
    const acls = await AclStore.open(config.dataDir, { superUsers: config.superUsers });
    const security = new BrokerSecurity(config, tls, users, acls, logger, limiter);
    try {
      security.#quotaEntries = await applyQuotaFile(config.dataDir, security.quotas);
    } catch (err) {
      security.close();
      throw err;
    }
    return security;
  }

  /** Whether any quota is set: without one, requests are not counted at all. */
  get throttling(): boolean {
    return this.#quotaEntries > 0;
  }

  /** The ACLs' authorizer with --authorization on, else null (everything allowed). */
  get authorizer(): Authorizer | null {
    return this.#authorizing ? this.#acls.authorizer : null;
  }

  scramCredential(user: string, mechanism: ScramMechanism): ScramCredential | undefined {
    return this.#users.scramCredential(user, mechanism);
  }

  /** Options for the TLS listener's `tls.createServer`, or null without TLS. */
  tlsOptions(): TlsOptions | null {
    return this.tls?.serverOptions() ?? null;
  }

  /**
   * Reads the TLS files and the users again. Resolves with the new secure context options (null
   * without TLS, or when the TLS files failed: the old ones stay, and the error is logged).
   */
  async reload(): Promise<TlsOptions | null> {
    let options: TlsOptions | null = null;
    if (this.tls !== null) {
      const result = await this.tls.reload();
      if (result.ok) {
        options = result.loaded.options;
        for (const warning of result.loaded.warnings) this.#logger.warn(warning);
        this.#logger.info({ subject: result.loaded.subject }, "TLS certificate reloaded");
      } else {
        this.#logger.error(
          { err: result.error },
          `TLS reload failed, keeping the old certificate: ${result.error.message}`,
        );
      }
    }
    try {
      this.#users = await UserStore.open(this.#dataDir);
      this.#logger.info({ users: this.#users.list().length }, "users reloaded");
    } catch (err) {
      this.#logger.error({ err }, "users reload failed, keeping the users loaded before");
    }
    try {
      this.#quotaEntries = await applyQuotaFile(this.#dataDir, this.quotas);
      this.#logger.info({ quotas: this.#quotaEntries }, "quotas reloaded");
    } catch (err) {
      this.#logger.error({ err }, "quota reload failed, keeping the quotas in force");
    }
    try {
      this.#acls = await AclStore.open(this.#dataDir, { superUsers: this.#superUsers });
      this.#logger.info({ rules: this.#acls.list().length }, "ACLs reloaded");
    } catch (err) {
      this.#logger.error({ err }, "ACL reload failed, keeping the rules loaded before");
    }
    return options;
  }

  // The admin API (src/http/security-routes.ts): changes on the running broker, durable first.

  listUsers(): UserInfo[] {
    return this.#users.list();
  }

  addUser(name: string, password: string): Promise<void> {
    return this.#users.add(name, password);
  }

  setPassword(name: string, password: string): Promise<void> {
    return this.#users.setPassword(name, password);
  }

  deleteUser(name: string): Promise<void> {
    return this.#users.delete(name);
  }

  listAcls(filter: AclFilter): AclRule[] {
    return this.#acls.list(filter);
  }

  addAcls(rules: readonly AclRule[]): Promise<number> {
    return this.#acls.add(rules);
  }

  removeAcls(filter: AclFilter): Promise<AclRule[]> {
    return this.#acls.remove(filter);
  }

  listQuotas(): ReturnType<QuotaManager["quotas"]> {
    return this.quotas.quotas();
  }

  /** Sets or removes a quota now, and in quotas.json (a failed write is reverted). */
  async setQuota(
    table: "principals" | "clientIds",
    name: string | null,
    limits: QuotaLimits | null,
  ): Promise<void> {
    const before = this.quotas.quotas();
    const defaults = table === "principals" ? before.principalDefault : before.clientIdDefault;
    const old = name === null ? defaults : (before[table][name] ?? null);
    const set = (l: QuotaLimits | null): void =>
      table === "principals" ? this.quotas.setPrincipalQuota(name, l) : this.quotas.setClientIdQuota(name, l);
    set(limits);
    try {
      await writeQuotaFile(this.#dataDir, this.quotas);
    } catch (err) {
      set(old);
      throw err;
    }
    const q = this.quotas.quotas();
    this.#quotaEntries =
      Object.keys(q.principals).length +
      Object.keys(q.clientIds).length +
      (q.principalDefault === null ? 0 : 1) +
      (q.clientIdDefault === null ? 0 : 1);
  }

  close(): void {
    clearInterval(this.#sweep);
  }
}

function required(value: string | null, message: string): string {
  if (value === null) throw new ConchError(ErrorCode.INVALID_CONFIG, message);
  return value;
}
