/**
 * The broker's security settings (docs/security.md): a TLS listener beside the plain one, SASL
 * authentication, ACL authorization. Rows of the settings table like every other setting, kept
 * here so the security ones read together.
 */
import { booleanValue, enumValue, integerValue, textValue, type ValueParser } from "./config-values.js";
import { type AnyBrokerSetting, setting } from "./setting-row.js";

export const CLIENT_AUTH_MODES = ["none", "requested", "required"] as const;
export const AUTHENTICATION_MODES = ["none", "required"] as const;
export const AUTHORIZATION_MODES = ["off", "on"] as const;
export const HTTP_METRICS_MODES = ["login", "open"] as const;

/** `conch.example.com,broker-1`: host names, comma separated; `*` alone accepts any. */
export function hostNameListValue(): ValueParser<readonly string[]> {
  const expected = "a comma-separated list of host names, or *";
  return (raw) => {
    let names: unknown[];
    if (typeof raw === "string")
      names = raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
    else if (Array.isArray(raw)) names = raw;
    else throw new Error(`expected ${expected}, got ${String(raw)}`);
    for (const name of names) {
      if (typeof name !== "string" || !/^(\*|[A-Za-z0-9._:-]+)$/.test(name)) {
        throw new Error(`expected ${expected}, got ${JSON.stringify(name)}`);
      }
    }
    return names as string[];
  };
}

/** `User:admin,User:ops`: principals, each `User:` and a non-empty name, comma separated. */
export function principalListValue(): ValueParser<readonly string[]> {
  const expected = "a comma-separated list of User:<name>";
  return (raw) => {
    // A string from a flag or the environment; an array from a config file or code.
    let names: unknown[];
    if (typeof raw === "string")
      names = raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
    else if (Array.isArray(raw)) names = raw;
    else throw new Error(`expected ${expected}, got ${String(raw)}`);
    for (const name of names) {
      if (typeof name !== "string" || !/^User:[^\s,]+$/.test(name)) {
        throw new Error(`expected ${expected}, got ${JSON.stringify(name)}`);
      }
    }
    return names as string[];
  };
}

/** A file or host that may be absent: null (the default, also as resolved config) or a non-empty string. */
function optionalText(): ValueParser<string | null> {
  const text = textValue();
  return (raw) => (raw === null ? null : text(raw));
}

/** A port that may be absent: null (the default: not served) or 0 to 65535. */
function optionalPort(): ValueParser<number | null> {
  const port = integerValue(0, 65535);
  return (raw) => (raw === null ? null : port(raw));
}

export const SECURITY_SETTINGS: readonly AnyBrokerSetting[] = [
  setting(
    "tlsPort",
    "number",
    "TCP port of the TLS listener, served when --tls-cert and --tls-key are given (0 picks a free one)",
    7423,
    integerValue(0, 65535),
  ),
  setting(
    "kafkaTlsPort",
    "number",
    "TCP port of the Kafka protocol over TLS, on --tls-host, with the TLS listener's certificate (needs --tls-cert, --tls-key; 0 picks a free one)",
    null,
    optionalPort(),
  ),
  setting("tlsHost", "host", "address the TLS listener listens on (default: --host)", null, optionalText()),
  setting(
    "tlsCert",
    "file",
    "PEM certificate (then intermediates) of the TLS listener",
    null,
    optionalText(),
  ),
  setting("tlsKey", "file", "PEM private key of --tls-cert, unencrypted", null, optionalText()),
  setting(
    "tlsCa",
    "file",
    "PEM CA certificates client certificates are checked against (mTLS)",
    null,
    optionalText(),
  ),
  setting(
    "tlsClientAuth",
    "mode",
    "client certificates on the TLS listener: none, requested or required (needs --tls-ca)",
    "none",
    enumValue(CLIENT_AUTH_MODES),
  ),
  setting(
    "authentication",
    "mode",
    "required: a connection must log in with SASL (or a verified client certificate) before any other request",
    "none",
    enumValue(AUTHENTICATION_MODES),
  ),
  setting(
    "saslPlainWithoutTls",
    null,
    "offer SASL PLAIN on the plain listener too (it sends the password itself: trusted networks only)",
    false,
    booleanValue(),
  ),
  setting(
    "authorization",
    "mode",
    "on: a request is allowed only by an ACL (conch acl) or to a --super-users principal",
    "off",
    enumValue(AUTHORIZATION_MODES),
  ),
  setting(
    "superUsers",
    "principals",
    "principals allowed everything, comma separated: User:admin,User:CN=ops",
    [],
    principalListValue(),
  ),
  setting(
    "httpHostNames",
    "names",
    "names the HTTP port answers to besides its addresses (Host header check against DNS rebinding); * for any",
    [],
    hostNameListValue(),
  ),
  setting(
    "httpMetrics",
    "mode",
    "with --authentication required, /metrics asks for a login (login) or is served to anyone (open)",
    "login",
    enumValue(HTTP_METRICS_MODES),
  ),
];
