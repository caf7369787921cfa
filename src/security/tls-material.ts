/**
 * A listener's TLS material: the certificate chain, its private key and the CA bundle that client
 * certificates must chain to, read from PEM files and checked before a listener uses them, so that
 * a wrong file is a clear error at start (or at SIGHUP) rather than a failed handshake later.
 *
 * `TlsMaterial.reload()` reads the files again (on SIGHUP): on success the new options replace
 * the old and a server applies them with `server.setSecureContext(options)`, which changes what
 * new handshakes use and leaves open connections alone; on failure the old material stays and the
 * error says what is wrong with the new files.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { createSecureContext, type SecureContextOptions, type TlsOptions } from "node:tls";
import { ConchError, ErrorCode } from "../format/errors.js";
import { certificateSubject } from "./certificate-principal.js";
import { readBoundedFile } from "./durable-file.js";

/** A PEM file larger than this is not a certificate chain or a key. */
export const MAX_PEM_BYTES = 1024 * 1024;
/** How far ahead of expiry a loaded certificate earns a warning. */
export const EXPIRY_WARNING_MS = 30 * 24 * 3600 * 1000;

/** Kafka's `ssl.client.auth`: whether a client must (required), may (requested) or does not present a certificate. */
export type ClientAuth = "none" | "requested" | "required";

export interface TlsFiles {
  /** `--tls-cert`: the listener's certificate, then any intermediates. */
  readonly certFile: string;
  /** `--tls-key`: its private key (unencrypted PEM). */
  readonly keyFile: string;
  /** `--tls-ca`: the CA certificates client certificates are checked against. */
  readonly caFile?: string;
  readonly clientAuth?: ClientAuth;
}

export interface LoadedTls {
  /** What `tls.createServer` and `server.setSecureContext` take. */
  readonly options: SecureContextOptions;
  /** The listener certificate's subject (RFC 4514 form) and expiry, for the start-up log. */
  readonly subject: string;
  readonly notAfter: Date;
  /** Things worth a log line that do not stop the listener: an expired or soon-expiring certificate. */
  readonly warnings: readonly string[];
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function invalid(message: string): ConchError {
  return new ConchError(ErrorCode.INVALID_CONFIG, message);
}

async function readPem(path: string, flag: string): Promise<Buffer> {
  const bytes = await readBoundedFile(path, MAX_PEM_BYTES, flag);
  if (bytes === null) throw invalid(`${flag} ${path} does not exist`);
  return bytes;
}

/** Every certificate of a PEM file, parsed; at least one. */
function certificates(pem: Buffer, path: string, flag: string): X509Certificate[] {
  const blocks = pem.toString("latin1").match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw invalid(`${flag} ${path} holds no PEM certificate`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw invalid(`${flag} ${path}: certificate ${i + 1} does not parse (${(err as Error).message})`);
    }
  });
}

function privateKey(pem: Buffer, path: string): KeyObject {
  // OpenSSL reports a key it has no passphrase for in several ways; the PEM headers say it plainly.
  const text = pem.toString("latin1");
  if (text.includes("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.includes("Proc-Type: 4,ENCRYPTED")) {
    throw invalid(`--tls-key ${path} is encrypted; give the key without a passphrase`);
  }
  try {
    return createPrivateKey({ key: pem, format: "pem" });
  } catch (err) {
    throw invalid(`--tls-key ${path} holds no PEM private key (${(err as Error).message})`);
  }
}

function expiryWarnings(cert: X509Certificate, what: string, now: number): string[] {
  const notBefore = Date.parse(cert.validFrom);
  const notAfter = Date.parse(cert.validTo);
  if (now > notAfter)
    return [`${what} expired on ${new Date(notAfter).toISOString()}: clients will refuse it`];
  if (now < notBefore) return [`${what} is not valid before ${new Date(notBefore).toISOString()}`];
  if (notAfter - now < EXPIRY_WARNING_MS) {
    return [
      `${what} expires on ${new Date(notAfter).toISOString()}, in ${Math.ceil((notAfter - now) / 86_400_000)} days`,
    ];
  }
  return [];
}

/** Reads and checks the files; INVALID_CONFIG naming the file and the problem when they will not do. */
export async function loadTls(files: TlsFiles, now = Date.now()): Promise<LoadedTls> {
  const clientAuth = files.clientAuth ?? "none";
  if (clientAuth !== "none" && files.caFile === undefined) {
    throw invalid(`client certificate authentication (${clientAuth}) needs --tls-ca`);
  }
  const [certPem, keyPem, caPem] = await Promise.all([
    readPem(files.certFile, "--tls-cert"),
    readPem(files.keyFile, "--tls-key"),
    files.caFile === undefined ? undefined : readPem(files.caFile, "--tls-ca"),
  ]);
  const chain = certificates(certPem, files.certFile, "--tls-cert");
  const leaf = chain[0]!;
  if (!leaf.checkPrivateKey(privateKey(keyPem, files.keyFile))) {
    throw invalid(
      `--tls-key ${files.keyFile} does not match the certificate in --tls-cert ${files.certFile}`,
    );
  }
  const warnings = expiryWarnings(leaf, `the certificate in --tls-cert ${files.certFile}`, now);
  for (let i = 1; i < chain.length; i++) {
    if (!chain[i - 1]!.checkIssued(chain[i]!)) {
      warnings.push(
        `--tls-cert ${files.certFile}: certificate ${i + 1} did not issue certificate ${i}; clients may not build the chain`,
      );
    }
  }
  if (caPem !== undefined && files.caFile !== undefined) {
    for (const [i, ca] of certificates(caPem, files.caFile, "--tls-ca").entries()) {
      warnings.push(...expiryWarnings(ca, `CA certificate ${i + 1} in --tls-ca ${files.caFile}`, now));
    }
  }
  const options: SecureContextOptions = { cert: certPem, key: keyPem, minVersion: "TLSv1.2" };
  if (caPem !== undefined) options.ca = caPem;
  try {
    createSecureContext(options);
  } catch (err) {
    throw invalid(`TLS files ${files.certFile}, ${files.keyFile} are not usable: ${(err as Error).message}`);
  }
  return {
    options,
    subject: certificateSubject(leaf),
    notAfter: new Date(Date.parse(leaf.validTo)),
    warnings,
  };
}

export type TlsReload =
  | { readonly ok: true; readonly loaded: LoadedTls }
  | { readonly ok: false; readonly error: ConchError };

export class TlsMaterial {
  readonly files: TlsFiles;
  #current: LoadedTls;

  private constructor(files: TlsFiles, current: LoadedTls) {
    this.files = files;
    this.#current = current;
  }

  static async load(files: TlsFiles, now = Date.now()): Promise<TlsMaterial> {
    return new TlsMaterial(files, await loadTls(files, now));
  }

  get current(): LoadedTls {
    return this.#current;
  }

  /** Options for `tls.createServer`: the material plus whether client certificates are asked for and checked. */
  serverOptions(): TlsOptions {
    const clientAuth = this.files.clientAuth ?? "none";
    return {
      ...this.#current.options,
      requestCert: clientAuth !== "none",
      rejectUnauthorized: clientAuth === "required",
    };
  }

  /** Reads the files again; the new material replaces the old only if it passes every check. */
  async reload(now = Date.now()): Promise<TlsReload> {
    try {
      this.#current = await loadTls(this.files, now);
      return { ok: true, loaded: this.#current };
    } catch (err) {
      const error = err instanceof ConchError ? err : invalid(`TLS reload failed: ${(err as Error).message}`);
      return { ok: false, error };
    }
  }
}
