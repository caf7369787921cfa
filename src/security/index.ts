/**
 * The security core (docs/security.md): what a session calls to authenticate, authorize and
 * throttle a connection. Pure of sockets; the listeners wire it in.
 */
export * from "./acl-rule.js";
export { ACLS_FILE, AclStore } from "./acl-store.js";
export { addressKey } from "./address-key.js";
export * from "./auth-failure-limiter.js";
export { Authorizer, type AuthorizerOptions } from "./authorizer.js";
export { certificatePrincipal, certificateSubject } from "./certificate-principal.js";
export * from "./connection-auth.js";
export { type DurableFileOps, defaultDurableFileOps } from "./durable-file.js";
export { PlainServer, parsePlain } from "./plain-server.js";
export * from "./quota-manager.js";
export * from "./sasl-mechanisms.js";
export type { CredentialLookup, SaslServer } from "./sasl-server.js";
export {
  DEFAULT_SCRAM_ITERATIONS,
  deriveScramCredential,
  MIN_SCRAM_ITERATIONS,
  SCRAM_MECHANISMS,
  type ScramCredential,
  type ScramMechanism,
} from "./scram-credential.js";
export { ScramServer } from "./scram-server.js";
export { SECURITY_DIR } from "./store-file.js";
export * from "./tls-material.js";
export { ANONYMOUS, checkPassword, checkUserName } from "./user-name.js";
export { type CredentialOptions, USERS_FILE, type UserInfo, UserStore } from "./user-store.js";
